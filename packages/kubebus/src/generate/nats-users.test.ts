import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { natsServerConfigOf } from './nats-server.js';
import { publishOf } from './nats-users.js';
import { plain, site } from './test-operators.js';

describe('NATS users', () => {
  it('lets no role manage kubebus streams', () => {
    for (const operator of [site, plain])
      for (const role of ROLES) {
        const { allow, deny } = publishOf(operator, role);
        assert.ok(!allow.includes('$JS.API.>'), role);
        assert.ok(!allow.some((s) => s.startsWith('$JS.API.STREAM.UPDATE')), role);
        if (allow.includes('$JS.API.STREAM.CREATE.*'))
          for (const stream of ['KUBEBUS_EVENTS', 'KUBEBUS_WORK', 'KV_kubebus_leases'])
            assert.ok(deny.includes(`$JS.API.STREAM.DELETE.${stream}`), `${role} ${stream}`);
      }
  });

  it("lets a reconciler with setup keep external state in its own buckets, and no one else's", () => {
    assert.ok(publishOf(site, 'reconciler').allow.includes('$O.>'));
    assert.ok(publishOf(site, 'reconciler').deny.includes('$KV.kubebus_cursors.>'));
    assert.ok(!publishOf(plain, 'reconciler').allow.includes('$JS.API.STREAM.CREATE.*'));
  });

  it('scopes work, dead letters and outcomes to the operator', () => {
    assert.ok(publishOf(site, 'watcher').allow.includes('kubebus.work.site.>'));
    assert.ok(publishOf(site, 'reconciler').allow.includes('kubebus.dlq.site.>'));
    assert.ok(publishOf(site, 'reconciler').allow.includes('kubebus.outcomes.site.>'));
  });

  it('writes a server configuration with admin, the roles, cli and dlq-admin', () => {
    const conf = natsServerConfigOf(site, ROLES);
    const users = [...conf.matchAll(/user: "([^"]+)", password: \$(\w+)/g)].map((m) => [
      m[1],
      m[2],
    ]);
    assert.deepEqual(users, [
      ['admin', 'KUBEBUS_ADMIN_PASSWORD'],
      ['site-watcher', 'KUBEBUS_SITE_WATCHER_PASSWORD'],
      ['site-reconciler', 'KUBEBUS_SITE_RECONCILER_PASSWORD'],
      ['site-status-writer', 'KUBEBUS_SITE_STATUS_WRITER_PASSWORD'],
      ['cli', 'KUBEBUS_CLI_PASSWORD'],
      ['dlq-admin', 'KUBEBUS_DLQ_ADMIN_PASSWORD'],
    ]);
  });
});
