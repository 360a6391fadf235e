import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstReconcileChain, type AuditEvent } from './audit-chain.js';

const at = (ms: number, took = 5) => ({
  requestReceivedTimestamp: new Date(Date.UTC(2026, 11, 5, 8, 0, 0, ms)).toISOString(),
  stageTimestamp: new Date(Date.UTC(2026, 11, 5, 8, 0, 0, ms + took)).toISOString(),
});
const request = (
  userAgent: string,
  verb: string,
  resource: string,
  name: string,
  ms: number,
  subresource?: string,
): AuditEvent => ({
  verb,
  userAgent,
  ...at(ms),
  objectRef: { resource, name, ...(subresource === undefined ? {} : { subresource }) },
});

describe('firstReconcileChain', () => {
  it("orders the operator's requests about each cluster, by its name and its objects' names, until the spec changes", () => {
    const op = 'kubebus/1.0 (linux/amd64) sites/reconciler';
    const writer = 'kubebus/1.0 (linux/amd64) sites/status-writer';
    const events: AuditEvent[] = [
      request('', 'create', 'databaseclusters', 'db-1', 0),
      request('', 'create', 'databaseclusters', 'db-10', 0),
      request(op, 'patch', 'databaseclusters', 'db-1', 100),
      request(op, 'patch', 'databaseclusters', 'db-10', 300),
      request(op, 'create', 'secrets', 'db-1-credentials', 140),
      request(op, 'create', 'secrets', 'db-10-credentials', 320),
      request(op, 'create', 'events', 'db-1.17f3a', 150),
      request(op, 'create', 'events', 'db-10.17f3b', 350),
      // the same operator's status writer, in a process of its own
      request(writer, 'patch', 'databaseclusters', 'db-1', 160, 'status'),
      request(writer, 'patch', 'databaseclusters', 'db-10', 400, 'status'),
      // Kubernetes' own and the driver's reads are not the operator's
      request('kube-controller-manager/v1', 'get', 'databaseclusters', 'db-1', 120),
      // after the driver changed db-1's spec: not its first reconcile
      request('', 'patch', 'databaseclusters', 'db-1', 500),
      request(op, 'patch', 'statefulsets', 'db-1', 600),
    ];
    const chain = firstReconcileChain(events);
    assert.equal(chain.operator, 'kubebus/1.0 (linux/amd64) sites');
    assert.equal(chain.objects, 2);
    assert.equal(chain.requestsPerObject, 4);
    assert.equal(chain.queueMs, 200); // (100 + 300) / 2
    assert.deepEqual(
      chain.steps.map((step) => [step.startMs, step.handlerMs, step.requests[0]?.[0]]),
      [
        [0, 5, 'patch databaseclusters'],
        [30, 5, 'create secrets'], // (40 + 20) / 2
        [50, 5, 'create events'],
        [80, 5, 'patch databaseclusters/status'], // (60 + 100) / 2
      ],
    );
  });
});
