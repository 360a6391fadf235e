import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCodes, hasCode } from '../errors/mod.js';
import { isTlsUnavailable, natsTlsOf, urlsRequireTls } from './nats-tls.js';

const dir = mkdtempSync(join(tmpdir(), 'kubebus-nats-tls-'));
const ca = join(dir, 'ca.crt');
writeFileSync(ca, 'not parsed here');

describe('the client TLS of NATS', () => {
  it('is off for nats:// URLs with no TLS file', () => {
    assert.equal(natsTlsOf('nats://127.0.0.1:4222,nats://b:4222'), undefined);
    assert.equal(urlsRequireTls('nats://a:4222'), false);
  });

  it('is required by any tls:// URL, even without a CA (the system roots then)', () => {
    assert.deepEqual(natsTlsOf('nats://a:4222,TLS://b:4222'), {});
    assert.equal(urlsRequireTls(' tls://a:4222'), true);
  });

  it('is required by a CA with a nats:// URL, and carries the files', () => {
    assert.deepEqual(natsTlsOf('nats://a:4222', { caFile: ca }), { caFile: ca });
    assert.deepEqual(natsTlsOf('tls://a:4222', { caFile: ca, certFile: ca, keyFile: ca }), {
      caFile: ca,
      certFile: ca,
      keyFile: ca,
    });
  });

  it('refuses half a client key pair and unreadable files, naming the variable', () => {
    assert.throws(
      () => natsTlsOf('tls://a:4222', { certFile: ca }),
      (error: unknown) =>
        hasCode(error, ErrorCodes.InvalidConfig) && /KUBEBUS_NATS_KEY/.test(String(error)),
    );
    assert.throws(
      () => natsTlsOf('nats://a:4222', { caFile: join(dir, 'missing.crt') }),
      (error: unknown) =>
        hasCode(error, ErrorCodes.InvalidConfig) &&
        /KUBEBUS_NATS_CA names .*missing/.test(String(error)),
    );
  });

  it("recognises nats.js' refusal of a server without TLS", () => {
    assert.equal(isTlsUnavailable(new Error("server does not support 'tls'")), true);
    assert.equal(isTlsUnavailable(new Error('connection refused')), false);
  });
});
