// What a fault run measures, read from the apiserver and the DLQ only (the
// system's public state): which objects converged, which side effects
// happened twice, what was dead-lettered, and how long convergence took.
import { CustomObjectsApi, EventsV1Api, CoreV1Api, AppsV1Api } from '@kubernetes/client-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Streams } from '@kubebus/shared/bus';
import type { TestBed } from '../bed/testbed.js';
import { readStream } from '../support/stream.js';

export const TARGET = {
  group: 'example.kubebus.dev',
  version: 'v1alpha1',
  plural: 'databaseclusters',
};
const FINALIZER = 'example.kubebus.dev/backup-bucket';

interface Cluster {
  metadata: { name: string; generation: number; finalizers?: string[] };
  status?: { observedGeneration?: number };
}

export interface Tally {
  readonly converged: number;
  readonly notConverged: string[];
  /** objects with more than one BucketCreated (or CredentialsCreated) Event */
  readonly doubled: string[];
  readonly deadLettered: number;
  readonly malformedParked: number;
}

export async function tally(
  bed: TestBed,
  nc: NatsConnection,
  namespace: string,
  names: readonly string[],
): Promise<Tally> {
  const kc = bed.kubeConfig();
  const clusters = (
    (await kc
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ ...TARGET, namespace })) as {
      items: Cluster[];
    }
  ).items;
  const byName = new Map(clusters.map((c) => [c.metadata.name, c]));
  const secrets = new Set(
    (await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace })).items.map(
      (s) => s.metadata?.name,
    ),
  );
  const statefulSets = new Set(
    (await kc.makeApiClient(AppsV1Api).listNamespacedStatefulSet({ namespace })).items.map(
      (s) => s.metadata?.name,
    ),
  );
  const notConverged = names.filter((name) => {
    const c = byName.get(name);
    return !(
      c !== undefined &&
      c.status?.observedGeneration === c.metadata.generation &&
      (c.metadata.finalizers ?? []).includes(FINALIZER) &&
      secrets.has(`${name}-credentials`) &&
      statefulSets.has(name)
    );
  });
  const events = await listAllEvents(bed, namespace);
  const created = new Map<string, number>();
  for (const e of events) {
    if (e.reason !== 'BucketCreated' && e.reason !== 'CredentialsCreated') continue;
    const id = `${e.regarding?.name ?? '?'} ${e.reason}`;
    // An Event repeated by the recorder carries a series count.
    created.set(id, (created.get(id) ?? 0) + 1 + Math.max(0, (e.series?.count ?? 1) - 1));
  }
  const doubled = [...created].filter(([, count]) => count > 1).map(([id]) => id);
  const letters = (await readStream(nc, Streams.deadLetters, 'kubebus.dlq.>')).map(
    (m) => JSON.parse(new TextDecoder().decode(m.data)) as { code: string },
  );
  const malformedParked = letters.filter((l) => l.code === 'KUBEBUS_MALFORMED_MESSAGE').length;
  return {
    converged: names.length - notConverged.length,
    notConverged,
    doubled,
    deadLettered: letters.length - malformedParked,
    malformedParked,
  };
}

async function listAllEvents(bed: TestBed, namespace: string) {
  const api = bed.kubeConfig().makeApiClient(EventsV1Api);
  const items = [];
  let token: string | undefined;
  do {
    const page = await api.listNamespacedEvent({
      namespace,
      limit: 500,
      ...(token ? { _continue: token } : {}),
    });
    items.push(...page.items);
    token = page.metadata?._continue;
  } while (token);
  return items;
}
