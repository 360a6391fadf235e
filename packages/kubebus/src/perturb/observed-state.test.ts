import assert from 'node:assert/strict';
import { test } from 'node:test';
import { differences, identifiersOf, stateOf, type RawState } from './observed-state.js';
import { placeOf } from './place.js';

const operator = { name: 'db', for: { kind: 'DatabaseCluster' } } as never;
const at = (namespace: string) => placeOf({ scope: 'Namespaced' }, namespace, 'db');

/** One run's raw state in its namespace: what differs between runs is given by the caller. */
function raw(namespace: string, uid: string, password: string, ip: string): RawState {
  const meta = (name: string) => ({
    name,
    namespace,
    uid: `${uid}-${name}`,
    resourceVersion: uid,
    creationTimestamp: uid,
  });
  return {
    object: {
      apiVersion: 'example.kubebus.dev/v1alpha1',
      kind: 'DatabaseCluster',
      metadata: { ...meta('db'), generation: 2, finalizers: ['example.kubebus.dev/backup-bucket'] },
      spec: { replicas: 1 },
      status: {
        observedGeneration: 2,
        endpoint: `db.${namespace}.svc:5432`,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'AllReplicasReady', lastTransitionTime: uid },
        ],
      },
    },
    owned: {
      Secret: [{ metadata: meta('db-credentials'), data: { password } } as never],
      Service: [
        {
          metadata: {
            ...meta('db'),
            ownerReferences: [{ kind: 'DatabaseCluster', name: 'db', uid, controller: true }],
          },
          spec: { clusterIP: ip, ports: [{ port: 5432 }] },
        } as never,
      ],
    },
    events: [
      {
        reason: 'CredentialsCreated',
        reportingController: 'kubebus.dev/db',
        regarding: { kind: 'DatabaseCluster', name: 'db' },
      },
      {
        reason: 'Other',
        reportingController: 'kubebus.dev/someone-else',
        regarding: { kind: 'DatabaseCluster', name: 'db' },
      },
    ],
  };
}

test('two runs that differ only in uids, times, namespaces, Secret values and IPs are the same state', () => {
  const reference = stateOf(
    operator,
    at('kbt-reference'),
    raw('kbt-reference', 'u1', 'c2VjcmV0', '10.0.0.1'),
  );
  const perturbed = stateOf(operator, at('kbt-3'), raw('kbt-3', 'u2', 'b3RoZXI=', '10.0.0.9'));
  assert.deepEqual(differences(reference, perturbed), []);
  assert.deepEqual(
    reference.events,
    { CredentialsCreated: 1 },
    "only this operator's Events about the object",
  );
  assert.deepEqual(reference.generations, { generation: 2, observed: 2 });
});

test('what an oracle must see: a missing object, a changed field, a lost Event, a leftover', () => {
  const reference = stateOf(operator, at('a'), raw('a', 'u1', 'x', '1'));
  const changed = raw('b', 'u2', 'x', '1');
  const secret = changed.owned['Secret']?.[0] as unknown as { data: Record<string, string> };
  secret.data['extra'] = 'y';
  const perturbed = stateOf(operator, at('b'), {
    ...changed,
    owned: { Secret: [secret as never] },
    events: [],
  });
  assert.deepEqual(differences(reference, perturbed), [
    'Secret/db-credentials.data: ["password"] → ["extra","password"]',
    'Service/db: missing',
    'Event CredentialsCreated: 1 in the reference, 0 here',
  ]);
  // a declared external call (ctx.once) made again
  assert.deepEqual(
    differences({ ...reference, effects: { charge: 1 } }, { ...reference, effects: { charge: 2 } }),
    ['Effect charge: 1 in the reference, 2 here'],
  );
  const gone = stateOf(operator, at('b'), { object: undefined, owned: {}, events: [] });
  assert.deepEqual(differences(gone, perturbed).slice(0, 2), [
    'the object still exists',
    'Secret/db-credentials: not in the reference (left behind or extra)',
  ]);
});

/** A cluster-scoped Tenant's run: its Namespace and a RoleBinding in it, plus another run's. */
function tenantRaw(name: string, uid: string, other: string): RawState {
  const controlled = (owner: string) => [
    { kind: 'Tenant', name: owner, uid: `${uid}-${owner}`, controller: true },
  ];
  const namespace = (owner: string) => ({
    metadata: {
      name: `tenant-${owner}`,
      uid,
      resourceVersion: uid,
      ownerReferences: controlled(owner),
    },
  });
  const binding = (owner: string) => ({
    metadata: {
      name: 'admins',
      namespace: `tenant-${owner}`,
      uid,
      resourceVersion: uid,
      ownerReferences: controlled(owner),
    },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  return {
    object: {
      apiVersion: 'tenancy.example.com/v1',
      kind: 'Tenant',
      metadata: { name, uid, resourceVersion: uid, generation: 1 },
      spec: { admins: ['alice'] },
      status: { observedGeneration: 1, namespace: `tenant-${name}` },
    },
    owned: {
      Namespace: [namespace(name), namespace(other)] as never,
      RoleBinding: [binding(name), binding(other)] as never,
    },
    events: [],
  };
}

test("a cluster-scoped object's run is its name: its children anywhere, another run's left out", () => {
  const tenants = { name: 'tenants', for: { kind: 'Tenant' } } as never;
  const placeA = placeOf({ scope: 'Cluster' }, 'kbt-reference', 'acme');
  const placeB = placeOf({ scope: 'Cluster' }, 'kbt-1', 'acme');
  const reference = stateOf(tenants, placeA, tenantRaw(placeA.name, 'u1', 'acme-kbt-12'));
  const perturbed = stateOf(tenants, placeB, tenantRaw(placeB.name, 'u2', 'acme-kbt-reference'));
  assert.deepEqual(Object.keys(reference.owned).sort(), [
    'Namespace/tenant-<name>',
    'RoleBinding/tenant-<name>/admins',
  ]);
  assert.deepEqual(differences(reference, perturbed), []);
  assert.deepEqual(reference.primary?.status, { namespace: 'tenant-<name>', conditions: [] });
});

test('a Normal Event counts each time; a Warning, whether it was reported at all', () => {
  const event = (type: string, reason: string) => ({
    type,
    reason,
    reportingController: 'kubebus.dev/db',
    regarding: { kind: 'DatabaseCluster', name: 'db' },
  });
  const observe = (events: ReturnType<typeof event>[]) =>
    stateOf(operator, at('a'), { ...raw('a', 'u1', 'x', '1'), events });
  // a Warning every reconcile that finds the reference missing: more reconciles, more Warnings
  const reference = observe([event('Warning', 'ReferenceMissing'), event('Normal', 'Announced')]);
  const more = observe([
    event('Warning', 'ReferenceMissing'),
    event('Warning', 'ReferenceMissing'),
    event('Normal', 'Announced'),
  ]);
  assert.deepEqual(differences(reference, more), []);
  // an announcement made twice, or a Warning never reported, still differs
  assert.deepEqual(
    differences(reference, observe([event('Normal', 'Announced'), event('Normal', 'Announced')])),
    [
      'Event ReferenceMissing (Warning): 1 in the reference, 0 here',
      'Event Announced: 1 in the reference, 2 here',
    ],
  );
});

test('a status that copies a fixture’s resourceVersion or an owned object’s uid is the same state in both runs', () => {
  const run = (namespace: string, fixtureVersion: string, secretUid: string): RawState => ({
    object: {
      apiVersion: 'example.kubebus.dev/v1alpha1',
      kind: 'DatabaseCluster',
      metadata: { name: 'db', namespace, uid: `db-${namespace}`, resourceVersion: '1' },
      spec: {},
      status: { settingsVersion: fixtureVersion, credentials: secretUid, phase: 'Ready' },
    },
    owned: {
      Secret: [
        { metadata: { name: 'db-credentials', namespace, uid: secretUid, resourceVersion: '5' } },
      ] as never,
    },
    events: [],
    identifiers: new Map([[fixtureVersion, '<resourceVersion of ConfigMap/settings revision 1>']]),
  });
  const reference = stateOf(operator, at('a'), run('a', '225', 'uid-a'));
  const perturbed = stateOf(operator, at('b'), run('b', '286', 'uid-b'));
  assert.deepEqual(differences(reference, perturbed), []);
  assert.deepEqual(
    (reference.primary?.status as Record<string, unknown>)['settingsVersion'],
    '<resourceVersion of ConfigMap/settings revision 1>',
  );
  // a value that is no identifier of the run still counts
  const otherPhase = run('b', '286', 'uid-b');
  (otherPhase.object as unknown as { status: Record<string, unknown> }).status['phase'] = 'Failed';
  assert.deepEqual(differences(reference, stateOf(operator, at('b'), otherPhase)), [
    'object.status.phase: "Ready" → "Failed"',
  ]);
});

test("a fixture's revisions keep names of their own: a status showing an older one still differs", () => {
  const settings = (resourceVersion: string) =>
    ({ metadata: { name: 'settings', uid: 'u', resourceVersion } }) as never;
  assert.deepEqual(identifiersOf('ConfigMap', settings('40'), 1), [
    ['u', '<uid of ConfigMap/settings>'],
    ['40', '<resourceVersion of ConfigMap/settings revision 1>'],
  ]);
  assert.notDeepEqual(
    identifiersOf('ConfigMap', settings('41'), 2)[1]?.[1],
    identifiersOf('ConfigMap', settings('40'), 1)[1]?.[1],
  );
});

test('a time the operator wrote is compared by being there, not by when: the runs start apart', () => {
  const withTimes = (namespace: string, uid: string, notAfter: string | undefined) => {
    const state = raw(namespace, uid, 'x', '1');
    const object = state.object as unknown as { status: Record<string, unknown> };
    object.status = { ...object.status, ...(notAfter === undefined ? {} : { notAfter }) };
    return stateOf(operator, at(namespace), state);
  };
  const reference = withTimes('kbt-reference', 'u1', '2026-12-06T16:52:08Z');
  assert.deepEqual(
    differences(reference, withTimes('kbt-3', 'u2', '2026-12-06T16:52:34.125+01:00')),
    [],
  );
  // a time missing, or a value that only looks like one, still differs
  assert.equal(differences(reference, withTimes('kbt-3', 'u2', undefined)).length, 1);
  assert.equal(differences(reference, withTimes('kbt-3', 'u2', 'tomorrow')).length, 1);
});

test('an owned object being deleted counts as gone (a pruned Namespace takes a while)', () => {
  const terminating = raw('run-b', 'u2', 'p', '10.0.0.1');
  const service = terminating.owned['Service']?.[0] as unknown as {
    metadata: Record<string, unknown>;
  };
  service.metadata['deletionTimestamp'] = '2026-12-07T10:00:00Z';
  const full = raw('run-c', 'u3', 'p', '10.0.0.1');
  const gone = { ...full, owned: { Secret: full.owned['Secret'] ?? [], Service: [] } };
  const whileDeleting = stateOf(operator, at('run-b'), terminating);
  const goneState = stateOf(operator, at('run-c'), gone);
  assert.deepEqual(differences(whileDeleting, goneState), []);
  // the control: one still there is not gone
  const present = stateOf(operator, at('run-a'), raw('run-a', 'u1', 'p', '10.0.0.1'));
  assert.notDeepEqual(differences(present, whileDeleting), []);
  // held by a finalizer not Kubernetes' own, it counts as there: a leak shows against a run
  // where it went
  service.metadata['finalizers'] = ['example.com/cleanup'];
  const held = stateOf(operator, at('run-b'), terminating);
  assert.match(differences(goneState, held).join('\n'), /Service\/db/);
});
