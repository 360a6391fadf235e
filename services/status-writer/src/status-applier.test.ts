import type { StatusIntent } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from '@kubebus/shared/kube';
import { isTerminalError } from '@kubebus/shared/definition';
import { Registry } from '@kubebus/shared/obs';
import { statusWriterMetrics } from './metrics.js';
import { StatusApplier, judge, statusWriteFailure } from './status-applier.js';

const object = (generation: number, status: Record<string, unknown>, uid = 'u1'): KubeObject => ({
  apiVersion: 'example.kubebus.dev/v1alpha1',
  kind: 'DatabaseCluster',
  metadata: { name: 'db', namespace: 'ns', uid, resourceVersion: '1', generation },
  status,
});

const intent = (observedGeneration: number, status: Record<string, unknown>): StatusIntent => ({
  key: { group: 'example.kubebus.dev', resource: 'databaseclusters', namespace: 'ns', name: 'db' },
  apiVersion: 'example.kubebus.dev/v1alpha1',
  kind: 'DatabaseCluster',
  uid: 'u1',
  observedGeneration,
  status,
  time: '2026-01-01T00:00:00Z',
});

const ready = (status: string, time: string) => [
  { type: 'Ready', status, reason: 'R', message: '', lastTransitionTime: time },
];

describe('status intents', () => {
  it('are dropped when older than the object (generation or observedGeneration)', () => {
    assert.deepEqual(judge(intent(1, { phase: 'Ready' }), object(2, {})), {
      apply: false,
      reason: 'stale',
    });
    assert.deepEqual(judge(intent(2, { phase: 'Ready' }), object(2, { observedGeneration: 3 })), {
      apply: false,
      reason: 'stale',
    });
  });

  it('are dropped for a deleted or re-created object', () => {
    assert.deepEqual(judge(intent(1, {}), undefined), { apply: false, reason: 'gone' });
    assert.deepEqual(judge(intent(1, {}), object(1, {}, 'u2')), { apply: false, reason: 'gone' });
  });

  it('are skipped when they would change nothing, whatever time a racing reconcile stamped', () => {
    const current = object(2, {
      observedGeneration: 2,
      phase: 'Ready',
      conditions: ready('True', 'T0'),
    });
    assert.deepEqual(
      judge(intent(2, { phase: 'Ready', conditions: ready('True', 'T1') }), current),
      {
        apply: false,
        reason: 'noop',
      },
    );
  });

  it('are applied with the lastTransitionTime moving only when the status changes', () => {
    const current = object(2, { observedGeneration: 1, conditions: ready('False', 'T0') });
    const same = judge(intent(2, { conditions: ready('False', 'T1') }), current);
    assert.deepEqual(same, {
      apply: true,
      status: { observedGeneration: 2, conditions: ready('False', 'T0') },
    });
    const flipped = judge(intent(2, { conditions: ready('True', 'T1') }), current);
    assert.deepEqual(flipped, {
      apply: true,
      status: { observedGeneration: 2, conditions: ready('True', 'T1') },
    });
  });
});

describe('a failed status write', () => {
  // as the client makes them of the apiserver's Status
  const answered = (status: number, message: string, retryAfterMs?: number) =>
    new KubeApiError(status, '', `apiserver answered ${String(status)}: ${message}`, retryAfterMs);

  it("is retried when the writer's own RBAC refuses it: an admin applies it, then it goes through", () => {
    const refused = answered(
      403,
      'databaseclusters.example.kubebus.dev "db" is forbidden: User "system:serviceaccount:kubebus:kubebus-status-writer" cannot patch resource "databaseclusters/status" in API group "example.kubebus.dev" in the namespace "ns"',
    );
    assert.equal(statusWriteFailure(refused), 'retried');
  });

  it('is refused for good when the apiserver rejects the status, and waited for when it throttles', () => {
    assert.equal(statusWriteFailure(answered(422, 'status.phase: Unsupported value')), 'rejected');
    assert.equal(
      statusWriteFailure(answered(403, 'admission webhook "w" denied the request: no')),
      'rejected',
    );
    assert.equal(statusWriteFailure(answered(429, 'slow down', 2_000)), 'throttled');
    assert.equal(statusWriteFailure(answered(503, 'unavailable')), 'retried');
  });
});

describe('an intent off the bus for another kind than the primary', () => {
  it('is refused for good before anything is read or written', async () => {
    const requests: string[] = [];
    const client = {
      request(path: string) {
        requests.push(path);
        return Promise.reject(new Error('no request expected'));
      },
      getIfExists(path: string) {
        requests.push(path);
        return Promise.reject(new Error('no request expected'));
      },
    };
    const applier = new StatusApplier({
      client: client as never,
      read: () => Promise.resolve(undefined),
      fieldManager: 'kubebus-status-writer',
      metrics: statusWriterMetrics(new Registry()),
      primary: { group: 'example.kubebus.dev', resource: 'databaseclusters' },
    });
    const context = {
      signal: new AbortController().signal,
      log: { debug() {}, info() {}, warn() {}, error() {} },
      reconcileId: 'r',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      attempt: 1,
    };
    const forged = (key: StatusIntent['key'], apiVersion: string) =>
      new TextEncoder().encode(
        JSON.stringify({ ...intent(1, { readyReplicas: 0 }), key, apiVersion, kind: 'Deployment' }),
      );
    for (const [key, apiVersion] of [
      // another kind (the attack: a Deployment's status in kube-system)
      [
        { group: 'apps', resource: 'deployments', namespace: 'kube-system', name: 'coredns' },
        'apps/v1',
      ],
      // the primary's key with another group's apiVersion
      [
        { group: 'example.kubebus.dev', resource: 'databaseclusters', namespace: 'ns', name: 'db' },
        'apps/v1',
      ],
    ] as const) {
      const key_ = { ...key };
      await assert.rejects(
        applier.reconcile({ key: key_, body: forged(key_, apiVersion) }, context),
        (error: unknown) =>
          isTerminalError(error) &&
          /this status writer writes only databaseclusters\.example\.kubebus\.dev/.test(
            (error as Error).message,
          ),
      );
    }
    assert.deepEqual(requests, []);
  });
});
