import { loadConfig } from '@kubebus/shared/config';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReconcilerConfigSchema, isLoopback } from './config.js';

const base = { KUBEBUS_NATS_URL: 'nats://127.0.0.1:4222', KUBEBUS_HTTP_PORT: '8081' };
const problems = (env: Record<string, string>) => {
  try {
    loadConfig(ReconcilerConfigSchema, { ...base, ...env });
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe("the CloudEvents sink's configuration", () => {
  it('refuses an unauthenticated sink on a non-loopback address, in one line saying what to do', () => {
    for (const env of [{}, { KUBEBUS_HTTP_AUTH: 'none' }, { KUBEBUS_HTTP_HOST: '0.0.0.0' }]) {
      const message = problems(env);
      const lines = message.split('\n').filter((line) => line.startsWith('  '));
      assert.equal(lines.length, 1, message);
      assert.match(
        lines[0] ?? '',
        /KUBEBUS_HTTP_AUTH: the CloudEvents sink on 0\.0\.0\.0:8081 would take events from anyone: set KUBEBUS_HTTP_AUTH=oidc/,
      );
    }
  });

  it('allows none on loopback only, and a sink that is off whatever the host', () => {
    assert.equal(problems({ KUBEBUS_HTTP_HOST: '127.0.0.1' }), '');
    assert.equal(problems({ KUBEBUS_HEALTH_HOST: '::1', KUBEBUS_HTTP_AUTH: 'none' }), '');
    assert.equal(problems({ KUBEBUS_HTTP_PORT: '0' }), '');
    assert.equal(isLoopback('127.0.0.53'), true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '127.0.0.1.example.com'])
      assert.equal(isLoopback(host), false, host);
  });

  it('needs the audience for oidc and the file for token', () => {
    assert.match(problems({ KUBEBUS_HTTP_AUTH: 'oidc' }), /KUBEBUS_HTTP_OIDC_AUDIENCE: /);
    assert.match(problems({ KUBEBUS_HTTP_AUTH: 'token' }), /KUBEBUS_HTTP_TOKEN_FILE: /);
    // any pod may have a token for the audience projected: who may send is named
    for (const subjects of [undefined, ' , '])
      assert.match(
        problems({
          KUBEBUS_HTTP_AUTH: 'oidc',
          KUBEBUS_HTTP_OIDC_AUDIENCE: 'kubebus-reconciler',
          ...(subjects === undefined ? {} : { KUBEBUS_HTTP_OIDC_SUBJECTS: subjects }),
        }),
        /KUBEBUS_HTTP_OIDC_SUBJECTS: KUBEBUS_HTTP_AUTH=oidc needs the token subjects that may send/,
      );
    const config = loadConfig(ReconcilerConfigSchema, {
      ...base,
      KUBEBUS_HTTP_AUTH: 'oidc',
      KUBEBUS_HTTP_OIDC_AUDIENCE: 'kubebus-reconciler',
      KUBEBUS_HTTP_OIDC_SUBJECTS: 'system:serviceaccount:knative-eventing:mt-broker-filter, ',
    });
    assert.deepEqual(config.http.auth, {
      mode: 'oidc',
      audience: 'kubebus-reconciler',
      subjects: ['system:serviceaccount:knative-eventing:mt-broker-filter'],
    });
    assert.equal(config.http.host, '0.0.0.0');
  });

  it('has timeouts and caps by default', () => {
    const { http } = loadConfig(ReconcilerConfigSchema, {
      ...base,
      KUBEBUS_HTTP_HOST: '127.0.0.1',
    });
    assert.equal(http.headersTimeoutMs, 10_000);
    assert.equal(http.requestTimeoutMs, 30_000);
    assert.equal(http.keepAliveTimeoutMs, 30_000);
    assert.equal(http.maxInFlight, 64);
    assert.equal(http.maxBytes, undefined, 'the NATS max_payload applies');
    assert.match(
      problems({ KUBEBUS_HTTP_HOST: '127.0.0.1', KUBEBUS_HTTP_HEADERS_TIMEOUT: '1m' }),
      /KUBEBUS_HTTP_HEADERS_TIMEOUT: at most KUBEBUS_HTTP_REQUEST_TIMEOUT/,
    );
  });
});

describe('read-your-own-writes', () => {
  it('waits 2 s for the bus by default, as long as set, and refuses what is not a duration', () => {
    const wait = (env: Record<string, string>) =>
      loadConfig(ReconcilerConfigSchema, { ...base, KUBEBUS_HTTP_HOST: '127.0.0.1', ...env })
        .readYourWritesWaitMs;
    assert.equal(wait({}), 2_000);
    assert.equal(wait({ KUBEBUS_READ_YOUR_WRITES_WAIT: '500ms' }), 500);
    assert.equal(wait({ KUBEBUS_READ_YOUR_WRITES_WAIT: '0s' }), 0);
    assert.match(
      problems({ KUBEBUS_HTTP_HOST: '127.0.0.1', KUBEBUS_READ_YOUR_WRITES_WAIT: 'soon' }),
      /KUBEBUS_READ_YOUR_WRITES_WAIT: expected a duration/,
    );
  });
});

describe('a refused name looked at again', () => {
  it('every 30 s by default, as often as set, and never more than once a second', () => {
    const every = (env: Record<string, string>) =>
      loadConfig(ReconcilerConfigSchema, { ...base, KUBEBUS_HTTP_HOST: '127.0.0.1', ...env })
        .claimRetryMs;
    assert.equal(every({}), 30_000);
    assert.equal(every({ KUBEBUS_CLAIM_RETRY: '3s' }), 3_000);
    // none would retry a refused object at once, for ever, spending no retries
    assert.match(
      problems({ KUBEBUS_HTTP_HOST: '127.0.0.1', KUBEBUS_CLAIM_RETRY: '0s' }),
      /KUBEBUS_CLAIM_RETRY: at least 1s/,
    );
  });
});
