import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectionOf } from './connection.js';
import { isUsageError } from './usage-error.js';

const dir = mkdtempSync(join(tmpdir(), 'kubebus-connection-tls-'));
const pem = (name: string) => {
  const file = join(dir, name);
  writeFileSync(file, '-----BEGIN CERTIFICATE-----\n');
  return file;
};
const envCa = pem('env-ca.crt');
const contextCa = pem('context-ca.crt');

/** A config dir with one nats context, `bed`, holding these fields. */
function withContext(fields: Record<string, string>): string {
  const config = mkdtempSync(join(dir, 'config-'));
  mkdirSync(join(config, 'nats', 'context'), { recursive: true });
  writeFileSync(join(config, 'nats', 'context', 'bed.json'), JSON.stringify(fields));
  return config;
}

const usageErrorMatching = (pattern: RegExp) => (error: unknown) =>
  isUsageError(error) && pattern.test(error.message) && !error.message.includes('\n');

describe('TLS of a command connection', () => {
  it('keeps KUBEBUS_NATS_CA when a nats context names the server, so TLS is required', () => {
    const config = withContext({ url: 'nats://ctx:4222' });
    const connection = connectionOf(
      { context: 'bed' },
      { XDG_CONFIG_HOME: config, KUBEBUS_NATS_CA: envCa },
    );
    assert.equal(connection.url, 'nats://ctx:4222');
    assert.deepEqual(connection.options.tls, { caFile: envCa });
  });

  it("requires TLS with a context's ca, and KUBEBUS_NATS_CA wins over it", () => {
    const config = withContext({ url: 'nats://ctx:4222', ca: contextCa });
    assert.deepEqual(connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config }).options.tls, {
      caFile: contextCa,
    });
    assert.deepEqual(
      connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config, KUBEBUS_NATS_CA: envCa }).options
        .tls,
      { caFile: envCa },
    );
  });

  it('applies KUBEBUS_NATS_CA to a --server URL too', () => {
    const connection = connectionOf(
      { server: 'nats://flag:4222' },
      { XDG_CONFIG_HOME: join(dir, 'none'), KUBEBUS_NATS_CA: envCa },
    );
    assert.deepEqual(connection.options.tls, { caFile: envCa });
  });

  it('stays plaintext only when nothing asks for TLS', () => {
    const config = withContext({ url: 'nats://ctx:4222' });
    assert.equal(
      connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config }).options.tls,
      undefined,
    );
    const tlsUrl = withContext({ url: 'tls://ctx:4222' });
    assert.deepEqual(connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: tlsUrl }).options.tls, {});
  });

  it("names the context's ca, not KUBEBUS_NATS_CA, when its file cannot be read", () => {
    const config = withContext({ url: 'nats://ctx:4222', ca: join(dir, 'missing.crt') });
    assert.throws(
      () => connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config }),
      usageErrorMatching(
        /^the `ca` of nats context bed names .*missing\.crt, which cannot be read/,
      ),
    );
    assert.throws(
      () =>
        connectionOf(
          { server: 'nats://flag:4222' },
          { XDG_CONFIG_HOME: join(dir, 'none'), KUBEBUS_NATS_CA: join(dir, 'gone.crt') },
        ),
      usageErrorMatching(/^KUBEBUS_NATS_CA names .*gone\.crt, which cannot be read/),
    );
  });

  it('refuses half a client key pair, naming where the half came from', () => {
    const config = withContext({ url: 'nats://ctx:4222', cert: pem('client.crt') });
    assert.throws(
      () => connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config }),
      usageErrorMatching(/^the `cert` of nats context bed is set without a key/),
    );
    assert.throws(
      () =>
        connectionOf(
          { server: 'nats://flag:4222' },
          { XDG_CONFIG_HOME: join(dir, 'none'), KUBEBUS_NATS_KEY: pem('client.key') },
        ),
      usageErrorMatching(/^KUBEBUS_NATS_KEY is set without a certificate/),
    );
  });
});
