import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devSettingsOf } from './dev-settings.js';

describe("kubebus dev's settings from the shell", () => {
  it('runs the operator with the behaviour settings and names what dev decides itself', () => {
    const { settings, ignored } = devSettingsOf({
      KUBEBUS_MAX_ATTEMPTS: '3',
      KUBEBUS_WATCH_NAMESPACES: 'team-a',
      KUBEBUS_HEALTH_PORT: '9000',
      KUBEBUS_HTTP_PORT: '8080',
      KUBEBUS_REPLICA_ID: 'mine',
      // dev's own server finding and connection: neither passed nor warned of here
      KUBEBUS_NATS_URL: 'nats://elsewhere:4222',
      KUBEBUS_ASSETS: '/opt/assets',
      PATH: '/usr/bin',
    });
    assert.deepEqual(settings, { KUBEBUS_MAX_ATTEMPTS: '3', KUBEBUS_WATCH_NAMESPACES: 'team-a' });
    assert.deepEqual(ignored, ['KUBEBUS_HEALTH_PORT', 'KUBEBUS_HTTP_PORT', 'KUBEBUS_REPLICA_ID']);
  });
});
