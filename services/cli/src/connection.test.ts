import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NoNatsServerError, connectionOf } from './connection.js';
import { isUsageError } from './usage-error.js';

const dir = mkdtempSync(join(tmpdir(), 'kubebus-connection-'));
const noContexts = { XDG_CONFIG_HOME: join(dir, 'none') };

describe('where a command connects', () => {
  it('takes flags over the environment', () => {
    const connection = connectionOf(
      { server: 'nats://flag:4222', user: 'u', password: 'p' },
      { ...noContexts, KUBEBUS_NATS_URL: 'nats://env:4222', KUBEBUS_NATS_USER: 'env' },
    );
    assert.equal(connection.url, 'nats://flag:4222');
    assert.equal(connection.from, '--server');
    assert.equal(connection.options.user, 'u');
    assert.equal(connection.options.pass, 'p');
  });

  it('reads the password file the roles read, over KUBEBUS_NATS_PASSWORD', () => {
    const file = join(dir, 'password');
    writeFileSync(file, 'from-file\n');
    const connection = connectionOf(
      {},
      {
        ...noContexts,
        KUBEBUS_NATS_URL: 'nats://a:4222,nats://b:4222',
        KUBEBUS_NATS_USER: 'cli',
        KUBEBUS_NATS_PASSWORD: 'from-variable',
        KUBEBUS_NATS_PASSWORD_FILE: file,
      },
    );
    assert.deepEqual(connection.options.servers, ['nats://a:4222', 'nats://b:4222']);
    assert.equal(connection.options.pass, 'from-file');
    assert.equal(connection.from, 'KUBEBUS_NATS_URL');
    assert.throws(
      () =>
        connectionOf(
          {},
          { ...noContexts, KUBEBUS_NATS_URL: 'nats://a:1', KUBEBUS_NATS_PASSWORD_FILE: '/nope' },
        ),
      (error: unknown) => isUsageError(error) && /KUBEBUS_NATS_PASSWORD_FILE/.test(error.message),
    );
  });

  it('uses a named or the selected nats context', () => {
    const config = join(dir, 'config');
    mkdirSync(join(config, 'nats', 'context'), { recursive: true });
    writeFileSync(
      join(config, 'nats', 'context', 'bed.json'),
      JSON.stringify({ url: 'nats://ctx:4222', user: 'c', password: 'cp' }),
    );
    const named = connectionOf({ context: 'bed' }, { XDG_CONFIG_HOME: config });
    assert.equal(named.url, 'nats://ctx:4222');
    assert.equal(named.from, 'nats context bed');
    assert.equal(named.options.pass, 'cp');
    writeFileSync(join(config, 'nats', 'context.txt'), 'bed\n');
    assert.equal(connectionOf({}, { XDG_CONFIG_HOME: config }).url, 'nats://ctx:4222');
    assert.throws(
      () => connectionOf({ context: 'nope' }, { XDG_CONFIG_HOME: config }),
      (error: unknown) => isUsageError(error) && /^no nats context "nope"/.test(error.message),
    );
  });

  it('says what to give when nothing names a server', () => {
    assert.throws(() => connectionOf({}, noContexts), NoNatsServerError);
  });
});
