import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES, partitionsOf, type Role } from '../host/role-configs.js';
import { natsServerConfigOf } from './nats-server.js';
import {
  STATUS_PARTITIONS,
  cliPermissions,
  dlqAdminPermissions,
  publishOf,
  stateAccountName,
  stateAccountOf,
  type Permissions,
} from './nats-users.js';
import { subjects } from '@kubebus/shared/bus';
import { plain, site } from './test-operators.js';

/** nats-server's subject matching: `*` one token, `>` the rest (one or more). */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** What nats-server decides for a publish: allowed by one allow, and by no deny. */
function mayPublish({ allow, deny }: Permissions, subject: string): boolean {
  return (
    allow.some((pattern) => matches(pattern, subject)) &&
    !deny.some((pattern) => matches(pattern, subject))
  );
}

const everyone: [string, Permissions][] = [
  ...[site, plain].flatMap((operator) =>
    ROLES.map((role): [string, Permissions] => [
      `${operator.name}-${role}`,
      publishOf(operator, role),
    ]),
  ),
  ['cli', cliPermissions()],
  ['dlq-admin', dlqAdminPermissions()],
];

describe('NATS users', () => {
  it('matches subjects as nats-server does', () => {
    assert.ok(matches('a.*.c', 'a.b.c'));
    assert.ok(!matches('a.*', 'a.b.c'));
    assert.ok(matches('a.>', 'a.b.c'));
    assert.ok(!matches('a.>', 'a'));
    assert.ok(!matches('a.b', 'a.b.c'));
  });

  it('lets no one but admin create, change or delete a durable consumer or a kubebus stream', () => {
    for (const [user, permissions] of everyone) {
      const refused = [
        '$JS.API.CONSUMER.DELETE.KUBEBUS_WORK.site_p0',
        '$JS.API.CONSUMER.DELETE.KUBEBUS_STATUS.site_status_p0',
        '$JS.API.CONSUMER.DELETE.KUBEBUS_EVENTS.oc_1',
        '$JS.API.CONSUMER.CREATE.KUBEBUS_WORK.site_p0.kubebus.work.site.p0.>',
        '$JS.API.CONSUMER.CREATE.KUBEBUS_WORK',
        '$JS.API.CONSUMER.CREATE.KUBEBUS_STATUS.site_status_p0',
        '$JS.API.CONSUMER.DURABLE.CREATE.KUBEBUS_WORK.site_p0',
        '$JS.API.CONSUMER.DURABLE.CREATE.KUBEBUS_EVENTS.mine',
        '$JS.API.STREAM.CREATE.KUBEBUS_EVENTS',
        '$JS.API.STREAM.UPDATE.KUBEBUS_WORK',
        '$JS.API.STREAM.DELETE.KV_kubebus_leases',
        '$JS.API.STREAM.PURGE.KUBEBUS_DLQ',
      ];
      for (const subject of refused)
        assert.ok(!mayPublish(permissions, subject), `${user} may ${subject}`);
      assert.ok(!permissions.allow.includes('$JS.API.>'), user);
      assert.ok(!permissions.allow.includes('$JS.API.CONSUMER.>'), user);
    }
  });

  it('lets no user of the kubebus account create a stream, whatever its name', () => {
    // permissions cannot see a stream's configuration: one could RePublish into kubebus.>
    for (const [user, permissions] of everyone)
      assert.ok(!mayPublish(permissions, '$JS.API.STREAM.CREATE.OBJ_site-backups'), user);
  });

  it("gives each role fetch, info and ack on exactly its own partitions' durables", () => {
    const own = (role: Role, stream: string, durable: string) =>
      [
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
        `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
        `$JS.ACK.${stream}.${durable}.1.2.3.4.5`,
      ].every((subject) => mayPublish(publishOf(site, role), subject));
    const last = partitionsOf(site) - 1;
    assert.ok(own('reconciler', 'KUBEBUS_WORK', 'site_p0'));
    assert.ok(own('reconciler', 'KUBEBUS_WORK', `site_p${last}`));
    assert.ok(!own('reconciler', 'KUBEBUS_WORK', `site_p${last + 1}`));
    assert.ok(!own('reconciler', 'KUBEBUS_WORK', 'plain_p0'), "another operator's work");
    assert.ok(own('reconciler', 'KUBEBUS_WORK', 'site_later'), 'its waiting requeues');
    assert.ok(!own('reconciler', 'KUBEBUS_WORK', 'plain_later'), "another operator's requeues");
    assert.ok(!own('watcher', 'KUBEBUS_WORK', 'site_later'));
    assert.ok(!own('reconciler', 'KUBEBUS_STATUS', 'site_status_p0'));
    assert.ok(own('status-writer', 'KUBEBUS_STATUS', 'site_status_p0'));
    assert.ok(own('status-writer', 'KUBEBUS_STATUS', `site_status_p${STATUS_PARTITIONS - 1}`));
    assert.ok(!own('status-writer', 'KUBEBUS_STATUS', 'plain_status_p0'));
    assert.ok(!own('status-writer', 'KUBEBUS_WORK', 'site_p0'));
    assert.ok(!own('watcher', 'KUBEBUS_WORK', 'site_p0'));
    for (const user of [cliPermissions(), dlqAdminPermissions()]) {
      assert.ok(!mayPublish(user, '$JS.API.CONSUMER.MSG.NEXT.KUBEBUS_WORK.site_p0'));
      assert.ok(!mayPublish(user, '$JS.ACK.KUBEBUS_WORK.site_p0.1.2.3.4.5'));
      // `kubebus lag` reads every consumer's numbers
      assert.ok(mayPublish(user, '$JS.API.CONSUMER.INFO.KUBEBUS_WORK.site_p0'));
    }
  });

  it('lets roles read the limits streams through ephemeral consumers', () => {
    const ordered = '$JS.API.CONSUMER.CREATE.KUBEBUS_EVENTS';
    for (const role of ROLES) assert.ok(mayPublish(publishOf(site, role), ordered), role);
    assert.ok(mayPublish(cliPermissions(), ordered));
    assert.ok(mayPublish(cliPermissions(), '$JS.API.CONSUMER.MSG.NEXT.KUBEBUS_DLQ.oc_x_1'));
    assert.ok(
      mayPublish(
        publishOf(site, 'reconciler'),
        '$JS.API.CONSUMER.CREATE.KV_kubebus_leases.oc_1.$KV.kubebus_leases.site.work.member.*',
      ),
    );
  });

  it("keeps each operator's status, leases, agreements, work, letters, outcomes, cursors, delivery and call records its own", () => {
    const ours = {
      reconciler: [
        'kubebus.status.site.p0.g.r.ns.n',
        'kubebus.work.site.p0.g.r.ns.n',
        'kubebus.dlq.site.g.r.ns.n',
        'kubebus.outcomes.site.g.r.ns.n',
        '$KV.kubebus_leases.site.work.lease.p0',
        '$KV.kubebus_agreements.site.sweep.p0',
        '$KV.kubebus_deliveries.site.0123abcd',
        '$KV.kubebus_performed_site.0123abcd.0123abcd',
        '$JS.API.STREAM.PURGE.KV_kubebus_performed_site',
      ],
      'status-writer': [
        '$KV.kubebus_leases.site.status.lease.p0',
        '$KV.kubebus_agreements.site.status',
        'kubebus.dlq.site_status-writer.g.r.ns.n',
        'kubebus.outcomes.site_status-writer.g.r.ns.n',
      ],
      watcher: [
        'kubebus.work.site.p0.g.r.ns.n',
        '$KV.kubebus_agreements.site.work',
        'kubebus.dlq.site_watcher.g.r.ns.n',
        '$KV.kubebus_cursors.site.configmaps._core._all._',
      ],
    } as const;
    for (const [role, subjects] of Object.entries(ours) as [Role, readonly string[]][])
      for (const subject of subjects) {
        assert.ok(mayPublish(publishOf(site, role), subject), `${role} ${subject}`);
        const theirs = subject.replace(/([._])site($|[._])/, '$1plain$2');
        assert.notEqual(theirs, subject);
        assert.ok(!mayPublish(publishOf(site, role), theirs), `${role} ${theirs}`);
      }
    for (const role of ROLES) {
      assert.ok(!mayPublish(publishOf(site, role), 'kubebus.status.plain.p0.g.r.ns.n'), role);
      assert.ok(!mayPublish(publishOf(site, role), '$KV.kubebus_leases.plain.work.lease.p0'));
      // the shared origins and cursor keys of the layout before: nobody's any more
      for (const shared of [
        'kubebus.dlq.status-writer.g.r.ns.n',
        'kubebus.outcomes.status-writer.g.r.ns.n',
        'kubebus.dlq.watcher.g.r.ns.n',
        '$KV.kubebus_cursors.configmaps._core._all._',
      ])
        assert.ok(!mayPublish(publishOf(site, role), shared), `${role} ${shared}`);
    }
    // one role of an operator does not write as another of it
    assert.ok(
      !mayPublish(publishOf(site, 'reconciler'), 'kubebus.dlq.site_status-writer.g.r.ns.n'),
    );
    assert.ok(
      !mayPublish(publishOf(site, 'reconciler'), 'kubebus.outcomes.site_status-writer.g.r.ns.n'),
    );
    assert.ok(!mayPublish(publishOf(site, 'status-writer'), 'kubebus.dlq.site.g.r.ns.n'));
    assert.ok(!mayPublish(publishOf(site, 'reconciler'), 'kubebus.events.g.r.ns.n'));
    assert.ok(!mayPublish(publishOf(site, 'status-writer'), 'kubebus.events.g.r.ns.n'));
    assert.ok(!mayPublish(cliPermissions(), 'kubebus.work.site.p0.g.r.ns.n'));
    assert.ok(mayPublish(dlqAdminPermissions(), 'kubebus.work.site.p0.g.r.ns.n'));
    assert.ok(mayPublish(dlqAdminPermissions(), '$JS.API.STREAM.MSG.DELETE.KUBEBUS_DLQ'));
  });

  it("lets a watcher record the changes of its operator's resources only", () => {
    const watcher = publishOf(site, 'watcher');
    const event = (group: string, resource: string) =>
      subjects.event({ group, resource, namespace: 'ns', name: 'n' });
    // for, and each kind it owns
    for (const [group, resource] of [
      ['example.test', 'sites'],
      ['', 'configmaps'],
      ['apps', 'deployments'],
    ] as const)
      assert.ok(mayPublish(watcher, event(group, resource)), `${group}/${resource}`);
    // another operator's resource, or a kind this one neither owns nor watches
    assert.ok(!mayPublish(watcher, event('test.kubebus.dev', 'widgets')));
    assert.ok(!mayPublish(watcher, event('', 'secrets')));
    assert.ok(!mayPublish(watcher, 'kubebus.events.x.y.z.forged'));
  });

  it("keeps an operator's external state in an account of its own", () => {
    for (const role of ROLES) assert.ok(!mayPublish(publishOf(site, role), '$O.backups-1.C.x'));
    const conf = natsServerConfigOf(site, ROLES);
    const account = conf.slice(conf.indexOf(`  ${stateAccountName(site)} {`));
    assert.match(account, /user: "site-state", password: \$KUBEBUS_SITE_STATE_PASSWORD/);
    assert.match(account, /allow: \["\$JS\.API\.>", "\$O\.>", "\$KV\.>"\]/);
    assert.deepEqual(stateAccountOf(plain), [], 'no setup, no state account');
    assert.ok(!natsServerConfigOf(plain, ROLES).includes('KUBEBUS_STATE_'));
  });

  it('writes a server configuration with admin, the roles, cli, dlq-admin and the state user', () => {
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
      // the state account's (setup)
      ['site-state', 'KUBEBUS_SITE_STATE_PASSWORD'],
    ]);
  });
});
