// `kubebus status <resource> <namespace/name>`: the first command to run when
// an object is not Ready — one screen joining its conditions, its latest
// Events, the work still pending for it, the last outcome of each controller
// (with the trace id to find in the logs), and its dead letters.
import {
  Buckets,
  DUE_HEADER,
  Streams,
  agreementKeys,
  leaseGroups,
  leaseKey,
  partitionOf,
  readOutcomes,
  readRevisions,
  subjects,
  type OutcomeRecord,
} from '@kubebus/shared/bus';
import { opOf } from '@kubebus/shared/events';
import { objectPath, type KubeClient } from '@kubebus/shared/kube';
import type { ObjectKey } from '@kubebus/shared/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { readDeadLettersOf } from './history.js';
import { formatAge, table } from './table.js';
import { reconciledSince } from './letter-recovery.js';
import { printable, safeText } from './terminal-safe.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  metadata?: { creationTimestamp?: string };
}

export interface ObjectStatus {
  readonly key: ObjectKey;
  readonly found: 'apiserver' | 'bus' | 'nowhere';
  /** when the bus recorded its deletion: what it shows is its last state before */
  readonly deletedAt?: string;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly resourceVersion?: string;
  readonly deleting: boolean;
  readonly conditions: Condition[];
  readonly events: KubeEvent[] | string;
  /** per controller: the object's partition, the replica holding it, work waiting since */
  readonly work: WorkPlace[];
  readonly outcomes: OutcomeRecord[];
  readonly letters: {
    seq: number;
    time: string;
    origin: string;
    attempts: number;
    reason: string;
  }[];
}

interface WorkPlace {
  readonly controller: string;
  readonly partition: number;
  /** the replica holding the partition's lease; none: nobody takes its work now */
  readonly heldBy?: string;
  /** the stream and time of the work still waiting, if any */
  readonly pending?: { stream: string; since: string };
  /** when the requeue the last reconcile asked for is due (ADR 0034), if one waits */
  readonly requeueDue?: string;
}

interface Recorded {
  metadata?: {
    generation?: number;
    resourceVersion?: string;
    uid?: string;
    deletionTimestamp?: string;
  };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

/**
 * Where each controller's work for this object goes: its partition (from the
 * counts in kubebus_agreements), which replica holds that partition's lease,
 * and the work mark or status intent still waiting there.
 */
async function workFor(nc: NatsConnection, key: ObjectKey): Promise<WorkPlace[]> {
  const jsm = await jetstreamManager(nc);
  const kvm = new Kvm(nc);
  const agreements = await kvm.open(Buckets.agreements).catch(() => undefined);
  const leases = await kvm.open(Buckets.leases).catch(() => undefined);
  const work: WorkPlace[] = [];
  if (agreements === undefined) return work;
  for await (const name of await agreements.keys()) {
    // partition counts only (<controller>.work, <controller>.status): the bucket
    // also records other agreements (upgrade sweeps)
    const owner = name.slice(0, name.indexOf('.'));
    const isStatus = name === agreementKeys.status(owner);
    if (!isStatus && name !== agreementKeys.work(owner)) continue;
    const entry = await agreements.get(name);
    let partitions: number | undefined;
    try {
      partitions = (entry?.json<{ partitions?: number }>() ?? {}).partitions;
    } catch {
      continue;
    }
    if (partitions === undefined) continue;
    const partition = partitionOf(key, partitions);
    const [stream, subject, controller, group] = isStatus
      ? [
          Streams.status,
          subjects.status(owner, partition, key),
          `${owner} status-writer`,
          leaseGroups.status(owner),
        ]
      : [Streams.work, subjects.work(owner, partition, key), owner, leaseGroups.work(owner)];
    const [message, lease, waiting] = await Promise.all([
      jsm.direct.getMessage(stream, { last_by_subj: subject }).catch(() => null),
      leases?.get(leaseKey(group, partition)).catch(() => null),
      isStatus
        ? null
        : jsm.direct
            .getMessage(Streams.work, { last_by_subj: subjects.later(owner, key) })
            .catch(() => null),
    ]);
    const heldBy = lease?.operation === 'PUT' ? lease.string() : undefined;
    const due = Number(waiting?.header.get(DUE_HEADER));
    work.push({
      controller,
      partition,
      ...(heldBy === undefined || heldBy === '' ? {} : { heldBy }),
      ...(message === null ? {} : { pending: { stream, since: message.time.toISOString() } }),
      ...(Number.isFinite(due) && due > 0 ? { requeueDue: new Date(due).toISOString() } : {}),
    });
  }
  return work;
}

export async function readStatus(
  nc: NatsConnection,
  client: KubeClient | undefined,
  key: ObjectKey & { version?: string; namespaced?: boolean },
): Promise<ObjectStatus> {
  let object: Recorded | undefined;
  let found: ObjectStatus['found'] = 'nowhere';
  if (client !== undefined && key.version !== undefined) {
    object = await client.getIfExists<Recorded>(
      objectPath(
        {
          group: key.group,
          version: key.version,
          resource: key.resource,
          namespaced: key.namespaced ?? true,
        },
        key.namespace,
        key.name,
      ),
    );
    if (object !== undefined) found = 'apiserver';
  }
  let deletedAt: string | undefined;
  if (object === undefined) {
    const revisions = await readRevisions(nc, key).catch(() => []);
    const last = revisions.at(-1);
    // the last state recorded whole (a deletion published by reference carries none)
    object = revisions.findLast((revision) => revision.event.data !== undefined)?.event.data as
      Recorded | undefined;
    if (object !== undefined) found = 'bus';
    if (last !== undefined && opOf(last.event) === 'delete') deletedAt = last.event.time ?? '';
  }
  let events: ObjectStatus['events'] =
    client === undefined ? 'set KUBECONFIG to see its Events' : 'none: the object is not found';
  if (client !== undefined && object?.metadata?.uid !== undefined) {
    const list = await client
      .request<{ items?: KubeEvent[] }>(
        `/api/v1${key.namespace === '' ? '' : `/namespaces/${encodeURIComponent(key.namespace)}`}/events`,
        { query: { fieldSelector: `involvedObject.uid=${object.metadata.uid}` } },
      )
      .catch(
        (error: unknown) => `cannot list Events: ${(error as Error).message.split('\n')[0] ?? ''}`,
      );
    events =
      typeof list === 'string'
        ? list
        : (list.items ?? []).sort((a, b) => eventTime(a).localeCompare(eventTime(b))).slice(-5);
  }
  const outcomes = await readOutcomes(nc, key);
  const lastPerController = new Map(outcomes.map((outcome) => [outcome.controller, outcome]));
  return {
    key,
    found,
    ...(deletedAt === undefined ? {} : { deletedAt }),
    ...(object?.metadata?.generation === undefined
      ? {}
      : { generation: object.metadata.generation }),
    ...(object?.status?.observedGeneration === undefined
      ? {}
      : { observedGeneration: object.status.observedGeneration }),
    ...(object?.metadata?.resourceVersion === undefined
      ? {}
      : { resourceVersion: object.metadata.resourceVersion }),
    deleting: object?.metadata?.deletionTimestamp !== undefined,
    conditions: object?.status?.conditions ?? [],
    events,
    work: await workFor(nc, key),
    outcomes: [...lastPerController.values()],
    letters: (await readDeadLettersOf(nc, key)).map((letter) => ({
      seq: letter.seq,
      time: letter.time,
      origin: letter.origin,
      attempts: letter.attempts,
      reason: letter.reason,
    })),
  };
}

function eventTime(event: KubeEvent): string {
  return event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? '';
}

/** How long ago `time` was, as the tables show ages. */
function ago(time: string | undefined, now: number): string {
  return time === undefined || time === '' ? '-' : formatAge(Math.max(0, now - Date.parse(time)));
}

/** The first line of a field off the bus or the apiserver, terminal-safe, cut at `max`. */
const oneLine = (text: string | undefined, max = 80) =>
  printable((text ?? '').split('\n')[0] ?? '', max);

/**
 * What to do about a letter: re-drive it after the fix — unless its controller
 * reconciled the object since (a spec change, a new version), which a
 * re-drive would only repeat.
 */
function letterHint(
  letter: ObjectStatus['letters'][number],
  outcomes: readonly OutcomeRecord[],
  now: number,
): string {
  const since = reconciledSince(letter, outcomes);
  return since === undefined
    ? `after the fix: kubebus dlq redrive ${String(letter.seq)}`
    : `reconciled since (${ago(since, now)} ago): nothing to re-drive`;
}

export function formatStatus(status: ObjectStatus, now = Date.now()): string {
  const { key } = status;
  const where = printable(key.namespace === '' ? key.name : `${key.namespace}/${key.name}`);
  const out: string[] = [];
  if (status.found === 'nowhere') {
    out.push(
      `${key.resource}${key.group === '' ? '' : `.${key.group}`} ${where}: not found (not on the apiserver, never recorded on the bus)`,
    );
  } else {
    const generation =
      status.generation === undefined
        ? ''
        : `generation ${status.generation}, observed ${status.observedGeneration ?? '-'}`;
    out.push(
      `${key.resource}${key.group === '' ? '' : `.${key.group}`} ${where}  ${generation}${status.deleting ? ', being deleted' : ''}  (from the ${status.found})`,
    );
    if (status.deletedAt !== undefined)
      out.push(
        `deleted${status.deletedAt === '' ? '' : ` ${ago(status.deletedAt, now)} ago`}: what follows is its last state before`,
      );
  }
  out.push('', 'CONDITIONS');
  out.push(
    status.conditions.length === 0
      ? '  none reported yet\n'
      : table(
          ['TYPE', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
          status.conditions.map((c) => [
            c.type,
            c.status,
            c.reason ?? '',
            ago(c.lastTransitionTime, now),
            oneLine(c.message),
          ]),
        ),
  );
  out.push('EVENTS (latest 5)');
  out.push(
    typeof status.events === 'string'
      ? `  ${status.events}\n`
      : status.events.length === 0
        ? '  none\n'
        : table(
            ['AGE', 'TYPE', 'REASON', 'MESSAGE'],
            status.events.map((e) => [
              ago(eventTime(e), now),
              e.type ?? '',
              e.reason ?? '',
              oneLine(e.message),
            ]),
          ),
  );
  out.push('LAST OUTCOME PER CONTROLLER');
  out.push(
    status.outcomes.length === 0
      ? '  none recorded\n'
      : table(
          ['CONTROLLER', 'RESULT', 'DURATION', 'ATTEMPT', 'AGE', 'TRACE', 'WHY'],
          status.outcomes.map((o) => [
            o.controller,
            o.result,
            `${o.ms}ms`,
            String(o.attempt),
            ago(o.at, now),
            o.traceparent.split('-')[1] ?? '',
            oneLine(o.error ?? o.note, 60),
          ]),
        ),
  );
  out.push('WORK');
  out.push(
    status.work.length === 0
      ? '  no controller has registered in kubebus_agreements yet\n'
      : table(
          ['CONTROLLER', 'PARTITION', 'HELD BY', 'PENDING'],
          status.work.map((w) => [
            w.controller,
            String(w.partition),
            w.heldBy ?? '(nobody: no replica running)',
            [
              w.pending === undefined
                ? 'none'
                : `waiting ${ago(w.pending.since, now)} in ${w.pending.stream}`,
              ...(w.requeueDue === undefined ? [] : [`requeue due ${w.requeueDue}`]),
            ].join('; '),
          ]),
        ),
  );
  out.push(
    `DEAD LETTERS: ${
      status.letters.length === 0
        ? 'none'
        : `\n${status.letters
            .map(
              (l) =>
                `  #${String(l.seq)} ${printable(l.time)} from ${printable(l.origin)} after ${l.attempts} attempts: ${oneLine(l.reason, 120)} (${letterHint(l, status.outcomes, now)})`,
            )
            .join('\n')}`
    }`,
  );
  // every field is printed terminal-safe (tables escape their cells); the whole once more, as a net
  return safeText(`${out.join('\n')}\n`);
}
