// controller-runtime's SyncPeriod: every period, each object of a controller's
// primary resource is marked dirty again, so whatever was lost anywhere heals.
// Mark ids carry the period's number, so twin watchers resyncing in the same
// period publish each mark once.
import type { ChangePublisher } from './change-publisher.js';
import type { KnownObjects } from './known-objects.js';
import type { WatcherMetrics } from './metrics.js';
import type { WatchedResource } from './targets.js';

export interface ResyncSource {
  readonly resource: WatchedResource;
  readonly controllers: readonly string[];
  readonly known: KnownObjects;
}

export async function resyncOnce(
  sources: readonly ResyncSource[],
  changes: ChangePublisher,
  metrics: WatcherMetrics,
  periodMs: number,
  now = Date.now(),
): Promise<number> {
  const epoch = Math.floor(now / periodMs);
  const completions: Promise<void>[] = [];
  for (const { resource, controllers, known } of sources) {
    for (const [uid, object] of [...known.entries()]) {
      const key = {
        group: resource.group,
        resource: resource.resource,
        namespace: object.namespace,
        name: object.name,
      };
      for (const controller of controllers) {
        const msgId = `${controller}/resync/${uid}/${object.resourceVersion}/${epoch}`;
        completions.push((await changes.markOnly(controller, key, msgId)).completion);
        metrics.resyncMarks.inc({ controller });
      }
    }
  }
  await Promise.all(completions);
  return completions.length;
}
