// The driver's view: it watches DatabaseClusters and StatefulSets and notes
// when each object converged — its status reports the current generation and
// its StatefulSet has the wanted replicas — timestamped on receipt.
import type { KubeObject } from '@kubebus/shared/events';
import { KubeClient, watchEvents, type ResourceRef } from '@kubebus/shared/kube';
import { restClientMetrics } from '@kubebus/shared/obs';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';

const CLUSTERS: ResourceRef = {
  group: 'example.kubebus.dev',
  version: 'v1alpha1',
  resource: 'databaseclusters',
  namespaced: true,
};
const STATEFULSETS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  namespaced: true,
};

export class Observer {
  readonly #client: KubeClient;
  readonly #abort = new AbortController();
  /** "ns/name" → observed generation in status, and the StatefulSet's replicas */
  readonly #observed = new Map<string, { generation: number; observed: number }>();
  readonly #replicas = new Map<string, number>();
  #target: { replicas: number; generation: number } = { replicas: 3, generation: 1 };
  readonly convergedAt = new Map<string, number>();

  constructor(kc: KubeConfig) {
    this.#client = new KubeClient(kc, restClientMetrics(new Registry()));
  }

  start(): void {
    void this.#watch(CLUSTERS, (o) => {
      const status = o['status'] as { observedGeneration?: number } | undefined;
      this.#observed.set(id(o), {
        generation: o.metadata.generation ?? 0,
        observed: status?.observedGeneration ?? 0,
      });
      this.#check(id(o));
    });
    void this.#watch(STATEFULSETS, (o) => {
      this.#replicas.set(id(o), (o['spec'] as { replicas?: number } | undefined)?.replicas ?? 0);
      this.#check(id(o));
    });
  }

  /** Starts a phase: objects converge when they reach this generation and replica count. */
  expect(target: { replicas: number; generation: number }): void {
    this.#target = target;
    this.convergedAt.clear();
    for (const key of this.#observed.keys()) this.#check(key);
  }

  stop(): void {
    this.#abort.abort();
  }

  #check(key: string): void {
    if (this.convergedAt.has(key)) return;
    const o = this.#observed.get(key);
    if (o === undefined || o.generation < this.#target.generation || o.observed !== o.generation)
      return;
    if (this.#replicas.get(key) !== this.#target.replicas) return;
    this.convergedAt.set(key, performance.now());
  }

  async #watch(resource: ResourceRef, onObject: (o: KubeObject) => void): Promise<void> {
    let resourceVersion = '0';
    while (!this.#abort.signal.aborted) {
      try {
        for await (const event of watchEvents(
          this.#client,
          { resource },
          {
            resourceVersion,
            inactivityMs: 600_000,
            timeoutSeconds: 600,
            signal: this.#abort.signal,
          },
        )) {
          if (event.type === 'ADDED' || event.type === 'MODIFIED') {
            onObject(event.object);
            resourceVersion = event.object.metadata.resourceVersion;
          } else if (event.type === 'BOOKMARK') resourceVersion = event.resourceVersion;
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

function id(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
