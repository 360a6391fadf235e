// How the roles' environment reaches the NATS client: CommonSchema parses it,
// commonConfig shapes it, natsTlsOf (what connectBus calls) turns it into the
// nats.js tls option.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { natsTlsOf } from '../bus/nats-tls.js';
import { CommonSchema, commonConfig } from './common.js';

const dir = mkdtempSync(join(tmpdir(), 'kubebus-common-'));
const ca = join(dir, 'ca.crt');
writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');

const natsOf = (env: Record<string, string>) => commonConfig(CommonSchema.parse(env)).nats;

describe('the NATS part of the common config', () => {
  it('passes KUBEBUS_NATS_CA on with a nats:// URL, and the client then requires TLS', () => {
    const nats = natsOf({ KUBEBUS_NATS_URL: 'nats://nats:4222', KUBEBUS_NATS_CA: ca });
    assert.deepEqual(nats.tls, { caFile: ca });
    assert.deepEqual(natsTlsOf(nats.servers, nats.tls), { caFile: ca });
  });

  it('requires TLS for a tls:// URL alone, and none for nats:// alone', () => {
    const tlsOnly = natsOf({ KUBEBUS_NATS_URL: 'tls://nats:4222' });
    assert.deepEqual(tlsOnly.tls, {});
    assert.deepEqual(natsTlsOf(tlsOnly.servers, tlsOnly.tls), {});
    const plain = natsOf({ KUBEBUS_NATS_URL: 'nats://nats:4222' });
    assert.equal(natsTlsOf(plain.servers, plain.tls), undefined);
  });

  it('passes a client key pair on, and refuses an empty KUBEBUS_NATS_CA', () => {
    const nats = natsOf({
      KUBEBUS_NATS_URL: 'tls://nats:4222',
      KUBEBUS_NATS_CERT: ca,
      KUBEBUS_NATS_KEY: ca,
    });
    assert.deepEqual(nats.tls, { certFile: ca, keyFile: ca });
    assert.equal(
      CommonSchema.safeParse({ KUBEBUS_NATS_URL: 'nats://n:4222', KUBEBUS_NATS_CA: '' }).success,
      false,
    );
  });

  it('refuses a URL that is neither nats:// nor tls://', () => {
    assert.equal(CommonSchema.safeParse({ KUBEBUS_NATS_URL: 'http://nats:4222' }).success, false);
  });
});
