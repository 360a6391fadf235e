import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devExports } from './dev-exports.js';

const started = {
  cluster: 'local' as const,
  kubeconfigPath: '/tmp/kubebus-testbed-x/kubeconfig',
  natsUrl: 'tls://127.0.0.1:4333',
  natsEnv: {
    KUBEBUS_NATS_URL: 'tls://127.0.0.1:4333',
    KUBEBUS_NATS_CA: '/tmp/kubebus-testbed-x/ca.crt',
    KUBEBUS_NATS_USER: 'kubebus',
    KUBEBUS_NATS_PASSWORD_FILE: '/tmp/kubebus-testbed-x/nats-password',
  },
};

describe('devExports', () => {
  it("names the started server's URL, CA, user and password file, and the kubeconfig", () => {
    assert.equal(
      devExports(started, false),
      'KUBECONFIG=/tmp/kubebus-testbed-x/kubeconfig KUBEBUS_NATS_URL=tls://127.0.0.1:4333 KUBEBUS_NATS_CA=/tmp/kubebus-testbed-x/ca.crt KUBEBUS_NATS_USER=kubebus KUBEBUS_NATS_PASSWORD_FILE=/tmp/kubebus-testbed-x/nats-password',
    );
  });

  it('prints only the URL of a server the person named, never their password', () => {
    const named = {
      ...started,
      cluster: 'existing' as const,
      natsUrl: 'tls://nats.example:4222',
      natsEnv: {
        KUBEBUS_NATS_URL: 'tls://nats.example:4222',
        KUBEBUS_NATS_PASSWORD: 's3cret-from-env',
      },
    };
    assert.equal(devExports(named, true), 'KUBEBUS_NATS_URL=tls://nats.example:4222');
    assert.doesNotMatch(devExports(named, false), /s3cret/);
  });

  it('quotes a path a shell would split', () => {
    const spaced = { ...started, kubeconfigPath: "/tmp/my dir/it's/kubeconfig" };
    assert.match(devExports(spaced, false), /^KUBECONFIG='\/tmp\/my dir\/it'\\''s\/kubeconfig' /);
  });
});
