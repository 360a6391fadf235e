// Replay: re-run a reconciler (DatabaseCluster's, or any operator's) over the
// recorded history of one object, as a dry run — every apiserver write
// carries dryRun=All, status intents are captured instead of published — and
// show, for each revision, where the status it computes differs from the
// status that was recorded for that generation.
import { ObjectReader, readRevisions, type Revision } from '@kubebus/shared/bus';
import { opOf, type KubeObject } from '@kubebus/shared/events';
import {
  AppliedObjects,
  KubeClient,
  diff,
  formatChange,
  type Change,
  type KubeCredentials,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics, startTrace, type Logger } from '@kubebus/shared/obs';
import { keyString, type ObjectKey, type Reconciler } from '@kubebus/shared/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';

/** What a replay command reads from the environment. */
export const ReplayEnvSchema = z.object({
  KUBEBUS_NATS_URL: z.string().regex(/^(nats|tls):\/\//, 'expected nats://host:port'),
  KUBEBUS_NATS_USER: z.string().optional(),
  KUBEBUS_NATS_PASSWORD: z.string().optional(),
  KUBECONFIG: z.string().optional(),
  KUBEBUS_LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'silent'])
    .default('silent'),
});
export type ReplayEnv = z.output<typeof ReplayEnvSchema>;

/** What a replayed reconciler is built with: nothing it does reaches the cluster. */
export interface ReplayTools {
  /** the replayed object as it was at the revision; what it owns, as it is now */
  readonly reader: Pick<ObjectReader, 'read' | 'readAll'>;
  /** every write carries dryRun=All */
  readonly client: KubeClient;
  /** captures the status instead of publishing it */
  readonly status: { publish(intent: { status: Record<string, unknown> }): Promise<void> };
  readonly fieldManager: string;
  readonly instance: string;
  readonly applied: AppliedObjects;
}

export interface ReplayStep {
  readonly seq: number;
  readonly op: string;
  readonly resourceVersion: string;
  readonly generation: number | undefined;
  /** the status this revision makes the reconciler publish, if any */
  readonly computed: Record<string, unknown> | undefined;
  /** the last status recorded while the object was at this generation */
  readonly recorded: Record<string, unknown> | undefined;
  readonly differences: Change[];
  readonly error?: string;
}

/** Status fields that differ between any two runs by nature, not by logic. */
function comparable(status: Record<string, unknown> | undefined): unknown {
  if (status === undefined) return undefined;
  const { observedGeneration: _generation, conditions, ...rest } = status;
  return {
    ...rest,
    conditions: Array.isArray(conditions)
      ? (conditions as Record<string, unknown>[]).map(
          ({ lastTransitionTime: _time, ...condition }) => condition,
        )
      : conditions,
  };
}

function recordedFor(revisions: readonly Revision[], generation: number | undefined) {
  const sameGeneration = revisions.filter(
    (r) => r.event.kbgeneration === generation && r.event.data,
  );
  return sameGeneration.at(-1)?.event.data?.['status'] as Record<string, unknown> | undefined;
}

export async function replay(deps: {
  readonly nc: NatsConnection;
  readonly kubeConfig: KubeCredentials;
  readonly key: ObjectKey;
  readonly log: Logger;
  readonly build: (tools: ReplayTools) => Reconciler;
}): Promise<ReplayStep[]> {
  const revisions = await readRevisions(deps.nc, deps.key);
  const client = new KubeClient(deps.kubeConfig, restClientMetrics(new Registry()), {
    dryRun: true,
  });
  const live = new ObjectReader(await jetstreamManager(deps.nc), (path) =>
    client.getIfExists<KubeObject>(path),
  );

  const steps: ReplayStep[] = [];
  for (const revision of revisions) {
    const { event } = revision;
    const captured: Record<string, unknown>[] = [];
    const reconciler = deps.build({
      // The replayed object as it was at this revision; what it owns, as it is now.
      reader: atRevision((key) =>
        keyString(key) === keyString(deps.key)
          ? Promise.resolve(opOf(event) === 'delete' ? undefined : event.data)
          : live.read(key),
      ),
      client,
      status: { publish: async (intent) => void captured.push(intent.status) },
      fieldManager: 'kubebus-replay',
      instance: 'replay',
      // every write of every revision is sent (as a dry run): nothing is remembered
      applied: new AppliedObjects(0),
    });
    let error: string | undefined;
    try {
      await reconciler.reconcile(
        { key: deps.key },
        {
          signal: new AbortController().signal,
          log: deps.log.child({ seq: revision.seq }),
          reconcileId: `replay-${revision.seq}`,
          traceparent: startTrace(),
          attempt: 1,
        },
      );
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    const computed = captured.at(-1);
    const recorded = recordedFor(revisions, event.kbgeneration);
    steps.push({
      seq: revision.seq,
      op: opOf(event),
      resourceVersion: event.kbrv,
      generation: event.kbgeneration,
      computed,
      recorded,
      differences: computed === undefined ? [] : diff(comparable(recorded), comparable(computed)),
      ...(error === undefined ? {} : { error }),
    });
  }
  return steps;
}

export function formatReplay(steps: readonly ReplayStep[]): string {
  if (steps.length === 0) return 'no recorded history\n';
  const lines: string[] = [];
  for (const step of steps) {
    const head = `#${step.seq} ${step.op} rv ${step.resourceVersion}${step.generation === undefined ? '' : ` generation ${step.generation}`}`;
    if (step.computed === undefined) {
      lines.push(
        `${head}: no status computed${step.error === undefined ? '' : ` (${step.error})`}`,
      );
    } else if (step.differences.length === 0) {
      lines.push(
        `${head}: status same as recorded${step.error === undefined ? '' : ` (then: ${step.error})`}`,
      );
    } else {
      lines.push(`${head}: status differs from recorded`);
      for (const change of step.differences) lines.push(`    ${formatChange(change)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A reader from a function of one key (reads of several are made one by one). */
function atRevision(read: (key: ObjectKey) => Promise<KubeObject | undefined>) {
  return { read, readAll: (keys: readonly ObjectKey[]) => Promise.all(keys.map(read)) };
}
