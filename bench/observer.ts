// The driver's view, with the independent harness' definition of converged
// (../shared/bench-peers/driver/run.ts): it watches the DatabaseClusters and
// the four kinds they own and notes, per object, when each write was first
// seen (wall-clock ms on receipt, comparable with the bus' timestamps).
//   create: status.observedGeneration == generation 1 and the StatefulSet,
//           Service, ConfigMap and Secret all seen; the latest of those.
//   update: observedGeneration == the new generation and the StatefulSet
//           shows the new replicas; the later of the two.
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
const OWNED = {
  statefulSet: { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true },
  service: { group: '', version: 'v1', resource: 'services', namespaced: true },
  configMap: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  secret: { group: '', version: 'v1', resource: 'secrets', namespaced: true },
} as const satisfies Record<string, ResourceRef>;
type OwnedKind = keyof typeof OWNED;
/** what the example labels its owned objects with; the driver watches only those */
const SELECTOR = 'app.kubernetes.io/name=databasecluster';

/** When the driver first saw each write for one object, in Date.now() ms. */
export interface Sightings {
  finalizer?: number;
  /** status.observedGeneration reached generation 1 */
  status1?: number;
  owned: Partial<Record<OwnedKind, number>>;
  /** status.observedGeneration reached the updated generation */
  status2?: number;
  /** the StatefulSet with the updated replicas */
  statefulSet2?: number;
}

export class Observer {
  readonly #client: KubeClient;
  readonly #abort = new AbortController();
  #target: { replicas: number; generation: number } = { replicas: 3, generation: 1 };
  /** "ns/name" → what was seen when */
  readonly sightings = new Map<string, Sightings>();
  /** "ns/name" → converge time of the current phase (Date.now() ms) */
  readonly convergedAt = new Map<string, number>();

  constructor(kc: KubeConfig) {
    this.#client = new KubeClient(kc, restClientMetrics(new Registry()));
  }

  start(): void {
    void this.#watch(CLUSTERS, undefined, (o, at) => {
      const seen = this.#of(id(o));
      const generation = o.metadata.generation ?? 0;
      const observed = (o['status'] as { observedGeneration?: number } | undefined)
        ?.observedGeneration;
      if (seen.finalizer === undefined && hasFinalizers(o)) seen.finalizer = at;
      if (observed === generation && generation === 1) seen.status1 ??= at;
      if (observed === generation && generation >= 2) seen.status2 ??= at;
      this.#check(id(o));
    });
    for (const [kind, resource] of Object.entries(OWNED) as [OwnedKind, ResourceRef][]) {
      void this.#watch(resource, SELECTOR, (o, at) => {
        const owner = o.metadata.labels?.['app.kubernetes.io/instance'];
        if (owner === undefined) return;
        const key = `${o.metadata.namespace ?? ''}/${owner}`;
        const seen = this.#of(key);
        seen.owned[kind] ??= at;
        const replicas = (o['spec'] as { replicas?: number } | undefined)?.replicas;
        if (
          kind === 'statefulSet' &&
          this.#target.generation >= 2 &&
          replicas === this.#target.replicas
        )
          seen.statefulSet2 ??= at;
        this.#check(key);
      });
    }
  }

  /** Starts a phase: objects converge when they reach this generation and replica count. */
  expect(target: { replicas: number; generation: number }): void {
    this.#target = target;
    this.convergedAt.clear();
    for (const key of this.sightings.keys()) this.#check(key);
  }

  stop(): void {
    this.#abort.abort();
  }

  #of(key: string): Sightings {
    let seen = this.sightings.get(key);
    if (seen === undefined) this.sightings.set(key, (seen = { owned: {} }));
    return seen;
  }

  #check(key: string): void {
    if (this.convergedAt.has(key)) return;
    const seen = this.sightings.get(key);
    if (seen === undefined) return;
    const at =
      this.#target.generation === 1
        ? latest([
            seen.status1,
            seen.owned.statefulSet,
            seen.owned.service,
            seen.owned.configMap,
            seen.owned.secret,
          ])
        : latest([seen.status2, seen.statefulSet2]);
    if (at !== undefined) this.convergedAt.set(key, at);
  }

  async #watch(
    resource: ResourceRef,
    labelSelector: string | undefined,
    onObject: (o: KubeObject, at: number) => void,
  ): Promise<void> {
    let resourceVersion = '0';
    while (!this.#abort.signal.aborted) {
      try {
        for await (const event of watchEvents(
          this.#client,
          { resource, ...(labelSelector === undefined ? {} : { labelSelector }) },
          {
            resourceVersion,
            inactivityMs: 600_000,
            timeoutSeconds: 600,
            signal: this.#abort.signal,
          },
        )) {
          if (event.type === 'ADDED' || event.type === 'MODIFIED') {
            onObject(event.object, Date.now());
            resourceVersion = event.object.metadata.resourceVersion;
          } else if (event.type === 'BOOKMARK') resourceVersion = event.resourceVersion;
        }
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

/** The latest of all, or undefined while any is missing. */
function latest(times: readonly (number | undefined)[]): number | undefined {
  let max = -Infinity;
  for (const t of times) {
    if (t === undefined) return undefined;
    max = Math.max(max, t);
  }
  return max;
}

function hasFinalizers(o: KubeObject): boolean {
  const finalizers: unknown = o.metadata.finalizers;
  return Array.isArray(finalizers) && finalizers.length > 0;
}

function id(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
