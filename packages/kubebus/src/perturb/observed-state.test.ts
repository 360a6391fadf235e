import assert from 'node:assert/strict';
import { test } from 'node:test';
import { differences, stateOf, type RawState } from './observed-state.js';

const operator = { name: 'db', for: { kind: 'DatabaseCluster' } } as never;

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
    'kbt-reference',
    'db',
    raw('kbt-reference', 'u1', 'c2VjcmV0', '10.0.0.1'),
  );
  const perturbed = stateOf(operator, 'kbt-3', 'db', raw('kbt-3', 'u2', 'b3RoZXI=', '10.0.0.9'));
  assert.deepEqual(differences(reference, perturbed), []);
  assert.deepEqual(
    reference.events,
    { CredentialsCreated: 1 },
    "only this operator's Events about the object",
  );
  assert.deepEqual(reference.generations, { generation: 2, observed: 2 });
});

test('what an oracle must see: a missing object, a changed field, a lost Event, a leftover', () => {
  const reference = stateOf(operator, 'a', 'db', raw('a', 'u1', 'x', '1'));
  const changed = raw('b', 'u2', 'x', '1');
  const secret = changed.owned['Secret']?.[0] as unknown as { data: Record<string, string> };
  secret.data['extra'] = 'y';
  const perturbed = stateOf(operator, 'b', 'db', {
    ...changed,
    owned: { Secret: [secret as never] },
    events: [],
  });
  assert.deepEqual(differences(reference, perturbed), [
    'Secret/db-credentials.data: ["password"] → ["extra","password"]',
    'Service/db: missing',
    'Event CredentialsCreated: 1 in the reference, 0 here',
  ]);
  const gone = stateOf(operator, 'b', 'db', { object: undefined, owned: {}, events: [] });
  assert.deepEqual(differences(gone, perturbed).slice(0, 2), [
    'the object still exists',
    'Secret/db-credentials: not in the reference (left behind or extra)',
  ]);
});
