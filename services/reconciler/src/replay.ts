// Replay: re-run a reconciler (DatabaseCluster's, or any operator's) over the
// recorded history of one object, as a dry run — the object and everything
// it reads as they were at each revision (their own recorded history), every
// apiserver write sent with dryRun=All and shown as what it would change,
// status intents captured instead of published — and show, for each
// revision, where the status it computes differs from the status that
// revision's own reconcile recorded. Which status that was, and the world it
// read, come from the outcomes on the bus: the operator's outcome for the
// revision's event, and the status writer's outcome in the same trace. A
// revision never reconciled on its own (coalesced into a later one) is not
// compared: there is nothing it came to.
import {
  crashedItsProcess,
  isParked,
  PerformedCalls,
  ROLE_ORIGINS,
  originOf,
  performedAsOf,
  performedBucketOf,
  readMessages,
  readOutcomes,
  readRevisions,
  Streams,
  subjects,
  type ObjectReader,
  type OutcomeRecord,
  type Revision,
} from '@kubebus/shared/bus';
import { FailureClasses, classifyFailure } from '@kubebus/shared/errors';
import { decodeNatsMessage, opOf, type KubeObject } from '@kubebus/shared/events';
import type { Resource } from '@kubebus/shared/definition';
import {
  AppliedObjects,
  KubeApiError,
  KubeClient,
  type RequestInit,
  diff,
  findCondition,
  formatChange,
  isKubeApiError,
  isNotFound,
  isRecord,
  withoutSecretValues,
  type Change,
  type Condition,
  type KubeCredentials,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics, startTrace, type Logger } from '@kubebus/shared/obs';
import { keyString, type ObjectKey, type Reconciler } from '@kubebus/shared/runtime';
import { stoppedByTerminal } from './operator/status.js';
import { Kvm } from '@nats-io/kv';
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
  /** ctx.list as of the revision: each object's last record on the bus before it, not today's apiserver */
  readonly listed: (resource: Resource, namespace: string | undefined) => Promise<KubeObject[]>;
  /** ctx.once's records as they were at the revision: 'done' for a call made before it, else 'performed' (never made) */
  readonly performed?: Pick<PerformedCalls, 'find' | 'claim' | 'made' | 'release' | 'forget'>;
}

export interface ReplayStep {
  readonly seq: number;
  readonly op: string;
  readonly resourceVersion: string;
  readonly generation: number | undefined;
  /** the status this revision makes the reconciler publish, if any */
  readonly computed: Record<string, unknown> | undefined;
  /** the status this revision's own reconcile recorded; undefined when there is none to compare */
  readonly recorded: Record<string, unknown> | undefined;
  /** why the computed status was not compared */
  readonly uncompared?: string;
  readonly differences: Change[];
  /** what the reconcile would write, each answered by the apiserver's dry run */
  readonly writes: ReplayWrite[];
  readonly error?: string;
  /** why the revision was not replayed at all (an earlier object of the name) */
  readonly notReplayed?: string;
  /**
   * The revision's own reconcile came to a status, and this one failed
   * before it computed any: a regression as surely as a different status
   */
  readonly failed?: true;
  /** where the recorded run stopped at this revision instead of reconciling it (parked, a TerminalError) */
  readonly recordedStop?: string;
}

export interface ReplayWrite {
  readonly method: string;
  readonly path: string;
  /** a new object, or the fields that would change on the one that was there */
  readonly changes: 'created' | Change[];
}

/** Fields the apiserver sets on every write, whatever the reconciler sends. */
const SERVER_SET = new Set([
  'uid',
  'creationTimestamp',
  'managedFields',
  'resourceVersion',
  'generation',
]);

/**
 * What a write would change of the object as it was: the fields its body
 * sends, in the apiserver's answer (defaults filled in), against the same
 * fields then. The answer is today's object with the write applied, so what
 * others changed since (a later delete's deletionTimestamp, say) is not the
 * write's doing and is left out.
 */
export function writtenFields(
  before: KubeObject | undefined,
  after: unknown,
  body?: unknown,
): Change[] {
  const sent = typeof body === 'string' ? parsedOrUndefined(body) : body;
  return diff(stripped(within(before, sent)), stripped(within(after, sent)));
}

/**
 * What a write removes: fields of the object as it is now that the dry run's
 * answer no longer has (server-side apply drops what the field manager set
 * before and no longer sends: a label, a map key). Today's object against the
 * same object with the write applied: nothing else came between them.
 */
export function removedFields(live: unknown, answer: unknown, before?: unknown): Change[] {
  if (live === undefined) return [];
  const removed = (from: unknown) =>
    diff(stripped(from), stripped(answer)).filter((change) => change.after === undefined);
  // and that the object had at the replayed revision: what came after, its write never saw
  const then =
    before === undefined ? undefined : new Set(removed(before).map((change) => change.path));
  return removed(live).filter((change) => then === undefined || then.has(change.path));
}

/**
 * The object without its status, the metadata the apiserver sets on every
 * write, and a Secret's values (never shown: a dry run answers them).
 */
function stripped(object: unknown): unknown {
  if (object === null || typeof object !== 'object') return object;
  const {
    metadata,
    status: _status,
    ...kept
  } = withoutSecretValues(object) as Record<string, unknown>;
  const meta = Object.fromEntries(
    Object.entries((metadata ?? {}) as Record<string, unknown>).filter(([k]) => !SERVER_SET.has(k)),
  );
  return { ...kept, metadata: meta };
}

/** The changes of the body's fields, and what the write removes besides (once per path). */
function withRemovals(changes: Change[], removed: Change[]): Change[] {
  const paths = new Set(changes.map((change) => change.path));
  return [...changes, ...removed.filter((change) => !paths.has(change.path))];
}

/** `value` with only the fields `shape` names (all of it where there is no shape); lists whole. */
function within(value: unknown, shape: unknown): unknown {
  if (!isRecord(value) || !isRecord(shape)) return value;
  return Object.fromEntries(
    Object.keys(shape)
      .filter((field) => field in value)
      .map((field) => [field, within(value[field], shape[field])]),
  );
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What a Secret read answered today besides a resourceVersion. */
const GONE = 'gone';
const UNREADABLE = 'unreadable';
/** Not read: the bus shows it was made after the revision, so it was absent then (as answered). */
const ABSENT_THEN = 'absent then';

/** A dry-run client that keeps what each write would have done. */
class RecordingClient extends KubeClient {
  /**
   * The Secrets whose values were read (ctx.readSecret), by key, as they are
   * today: a resourceVersion, gone, or not readable
   */
  readonly secretsRead = new Map<string, { key: ObjectKey; today: string }>();
  readonly writes: {
    method: string;
    path: string;
    body: unknown;
    answer: unknown;
    /** the object as it is now, before the dry run (a PATCH's) */
    live: unknown;
  }[] = [];
  /** what the reconcile is told a write answered (the world as of the revision) */
  asOfRevision: (path: string, answer: unknown) => Promise<unknown> = async (_, answer) => answer;
  /** whether the bus shows a Secret made after the revision (absent then, whatever it holds today) */
  madeAfterRevision: (key: ObjectKey) => Promise<boolean> = () => Promise.resolve(false);

  override async request<T = unknown>(path: string, init: RequestInit = {}): Promise<T> {
    const method = init.method ?? 'GET';
    if (method === 'GET') {
      // a read of a Secret is one of today's values, found or not
      const key = keyFromPath(path);
      if (key?.group !== '' || key.resource !== 'secrets') return super.request<T>(path, init);
      if (await this.madeAfterRevision(key)) {
        this.secretsRead.set(keyString(key), { key, today: ABSENT_THEN });
        throw new KubeApiError(
          404,
          'NotFound',
          `secrets "${key.name}" not found (at the revision)`,
        );
      }
      try {
        const answer = await super.request<T>(path, init);
        const today = (answer as KubeObject | undefined)?.metadata.resourceVersion ?? UNREADABLE;
        this.secretsRead.set(keyString(key), { key, today });
        return answer;
      } catch (error) {
        this.secretsRead.set(keyString(key), { key, today: isNotFound(error) ? GONE : UNREADABLE });
        throw error;
      }
    }
    // what a dry-run apply removes shows only against the object it was applied to; not
    // allowed to read it (a user who may patch, not get), the removals go unshown
    const live =
      method === 'PATCH'
        ? await super.request(path).catch((error: unknown) => {
            if (isNotFound(error) || isKubeApiError(error, 403)) return undefined;
            throw error;
          })
        : undefined;
    let answer: T;
    try {
      answer = await super.request<T>(path, init);
    } catch (error) {
      // a write into a Namespace an earlier write of this dry run would create: the dry run
      // made none, so the apiserver answers 404 for it; it would be made in it all the same
      const inside = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
      if (
        inside === undefined ||
        !this.#namespacesMade.has(inside) ||
        !isNotFound(error) ||
        !(error as Error).message.includes(`namespaces "${inside}" not found`)
      )
        throw error;
      answer = bodyOf(init.body) as T;
    }
    this.writes.push({ method, path, body: init.body, answer, live });
    // a Namespace this dry run would create: applied (PATCH, PUT) or created (POST)
    const made =
      method === 'POST'
        ? /^\/api\/v1\/namespaces(\?|$)/.test(path)
          ? (bodyOf(init.body) as { metadata?: { name?: string } } | undefined)?.metadata?.name
          : undefined
        : method === 'PATCH' || method === 'PUT'
          ? /^\/api\/v1\/namespaces\/([^/?]+)(\?|$)/.exec(path)?.[1]
          : undefined;
    if (made !== undefined && live === undefined) this.#namespacesMade.add(made);
    return (await this.asOfRevision(path, answer)) as T;
  }

  /** Namespaces a write of this dry run would create */
  readonly #namespacesMade = new Set<string>();
}

/** A request body as the object it carries. */
function bodyOf(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A dry run answers with the object as it is now, changed by the write; the
 * reconcile being replayed must see it as it was then. The fields the write
 * sets are the apiserver's answer; the status — which no apply of the
 * operator's sets, and which a reconcile may read from what apply returns —
 * is the one recorded at the revision (none for an object not there yet).
 */
function withStatusAsOf(answer: unknown, then: KubeObject | undefined): unknown {
  if (answer === null || typeof answer !== 'object') return answer;
  const { status: _now, ...rest } = answer as Record<string, unknown>;
  const status = then?.['status'];
  return status === undefined ? rest : { ...rest, status };
}

/**
 * An object the bus has no record of before the revision that existed then
 * all the same — one not on the bus at the time (an unlabelled Namespace an
 * operator adopts): today's, as the bus would record it, so a write to it
 * shows what it changes, not a create. Made after the revision (a second's
 * margin for two clocks): none, it is a create.
 */
export function existedUnrecorded(
  live: unknown,
  revisionTime: string | undefined,
): KubeObject | undefined {
  if (live === undefined || live === null || revisionTime === undefined) return undefined;
  const object = live as KubeObject;
  const stamp = object.metadata['creationTimestamp'];
  const created = typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
  if (!(created < Date.parse(revisionTime) - 1_000)) return undefined;
  return withoutSecretValues(object);
}

/**
 * A time the operator wrote (an issued-at, a last-checked): a replay computes
 * it again, at another time. That there is one is compared, not when (as
 * `kubebus test` compares runs).
 */
const RFC3339_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const A_TIME = '<a time>';

function withTimesNamed(value: unknown): unknown {
  if (typeof value === 'string') return RFC3339_TIME.test(value) ? A_TIME : value;
  if (Array.isArray(value)) return value.map(withTimesNamed);
  if (isRecord(value))
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, withTimesNamed(field)]),
    );
  return value;
}

/** Status fields that differ between any two runs by nature, not by logic. */
export function comparableStatus(status: Record<string, unknown> | undefined): unknown {
  if (status === undefined) return undefined;
  const { observedGeneration: _generation, conditions, ...rest } = status;
  return {
    ...(withTimesNamed(rest) as Record<string, unknown>),
    conditions: Array.isArray(conditions)
      ? (conditions as Record<string, unknown>[]).map(
          ({ lastTransitionTime: _time, ...condition }) => condition,
        )
      : conditions,
  };
}

export async function replay(deps: {
  readonly nc: NatsConnection;
  readonly kubeConfig: KubeCredentials;
  readonly key: ObjectKey;
  readonly log: Logger;
  readonly build: (tools: ReplayTools) => Reconciler;
  /** the replayed controller's name, as its outcomes record it */
  readonly controller: string;
  /** only revisions with a sequence in this range (inclusive) */
  readonly from?: number;
  readonly to?: number;
  /** the field manager the operator applies with (what a dry-run apply removes depends on it) */
  readonly fieldManager?: string;
  /** the replayed kind's versions in this release: a revision recorded in another is not replayed */
  readonly versions?: readonly string[];
}): Promise<ReplayStep[]> {
  const revisions = await readRevisions(deps.nc, deps.key);
  const metrics = restClientMetrics(new Registry());
  const live = new KubeClient(deps.kubeConfig, metrics);
  // Every other object as it was when the replayed revision was recorded: its
  // last revision before that one in KUBEBUS_EVENTS (one sequence for all).
  const histories = new Map<string, Promise<Revision[]>>();
  /** every revision the bus keeps of an object, read once per replay */
  const historyOf = (key: ObjectKey): Promise<Revision[]> => {
    const id = keyString(key);
    let history = histories.get(id);
    if (history === undefined) {
      history = readRevisions(deps.nc, key);
      histories.set(id, history);
    }
    return history;
  };
  /** the object's last revision at a point of the log: before a sequence, or at a time */
  const recordedBefore = async (key: ObjectKey, seq: number | Date) =>
    (await historyOf(key)).filter((r) => isBefore(r, seq)).at(-1);
  /** the object as it was at a point of the log: before a sequence, or at a time */
  const asOf = async (key: ObjectKey, seq: number | Date): Promise<KubeObject | undefined> => {
    const before = await recordedBefore(key, seq);
    if (before === undefined || opOf(before.event) === 'delete') return undefined;
    if (before.event.data === undefined) {
      const now = await live.getIfExists<KubeObject>(before.event.subject);
      // as the bus would have recorded it: a Secret without its values
      return now === undefined ? undefined : withoutSecretValues(now);
    }
    return before.event.data;
  };

  /** every record of a resource (in a namespace), read once per replay */
  const records = new Map<string, Promise<Revision[]>>();
  /** the objects of a resource as the bus had them at a point of the log (ctx.list) */
  const listedAt = async (
    resource: Resource,
    namespace: string | undefined,
    point: number | Date,
  ): Promise<KubeObject[]> => {
    const ref = { group: resource.group, resource: resource.plural };
    const one = subjects.event({ ...ref, namespace: namespace ?? '', name: 'x' });
    const filter =
      namespace === undefined ? subjects.eventsOf(ref) : `${one.slice(0, one.lastIndexOf('.'))}.*`;
    let all = records.get(filter);
    if (all === undefined) {
      all = readMessages(deps.nc, Streams.events, filter).then((messages) =>
        messages.flatMap((message) => {
          const decoded = decodeNatsMessage(message.data, message.header);
          return decoded.ok ? [{ seq: message.seq, event: decoded.event }] : [];
        }),
      );
      records.set(filter, all);
    }
    const last = new Map<string, Revision>();
    for (const record of await all)
      if (isBefore(record, point)) last.set(record.event.subject, record);
    const objects = await Promise.all(
      [...last.values()].map(async ({ event }) => {
        if (opOf(event) === 'delete') return undefined;
        if (event.data !== undefined) return event.data;
        // published by reference (too large for the bus), or a Secret: as it is today, without values
        const now = await live.getIfExists<KubeObject>(event.subject);
        return now === undefined ? undefined : withoutSecretValues(now);
      }),
    );
    return objects.filter((object): object is KubeObject => object !== undefined);
  };

  /**
   * Whether the bus shows the object made after a point of the log: nothing
   * recorded of it before, and its first record after an add the watch saw, at
   * a later resourceVersion than the revision's (a relist's add may be of an
   * object older than the recording; another kind's watch may deliver late).
   */
  const madeAfter = async (key: ObjectKey, point: number | Date, revisionRv: string) => {
    const history = await historyOf(key);
    if (history.some((r) => isBefore(r, point))) return false;
    const first = history.find((r) => !isBefore(r, point));
    return (
      first !== undefined &&
      opOf(first.event) === 'add' &&
      first.event.kbreason === 'watch' &&
      laterVersion(first.event.kbrv, revisionRv)
    );
  };

  /**
   * The Secrets read whose values may not be what they were at the revision,
   * each with why. Known the same: one the bus recorded before the revision
   * at today's resourceVersion, or deleted then and gone today. Sequences of
   * one stream, not two processes' clocks, say what came before.
   */
  const notAsThen = async (read: RecordingClient['secretsRead'], seq: number) => {
    const unsure: string[] = [];
    for (const { key, today } of read.values()) {
      const then = await recordedBefore(key, seq);
      const recorded =
        then === undefined ? undefined : opOf(then.event) === 'delete' ? GONE : then.event.kbrv;
      if ((recorded === today && today !== UNREADABLE) || today === ABSENT_THEN) continue;
      const why =
        today === UNREADABLE
          ? 'not readable today'
          : recorded === undefined
            ? 'not recorded on the bus before the revision: declare it in watches, or its records aged out'
            : 'changed since';
      unsure.push(`Secret ${key.namespace}/${key.name} (${why})`);
    }
    return unsure;
  };
  const outcomes = await readOutcomes(deps.nc, deps.key);
  const performed = await performedCallsOf(deps.nc, deps.controller, deps.log);
  const steps: ReplayStep[] = [];
  // the object the name stands for now: revisions of an earlier one are not replayed. The
  // last one not deleted (a relist records the tombstones of gone objects after what it
  // listed); with none, the last one there was
  const liveUid = (revisions.findLast(({ event }) => opOf(event) !== 'delete') ?? revisions.at(-1))
    ?.event.kbuid;
  for (const [index, revision] of revisions.entries()) {
    if (deps.from !== undefined && revision.seq < deps.from) continue;
    if (deps.to !== undefined && revision.seq > deps.to) continue;
    const { event } = revision;
    const skipped = (notReplayed: string): ReplayStep => ({
      ...headOf(revision),
      computed: undefined,
      recorded: undefined,
      differences: [],
      writes: [],
      notReplayed,
    });
    if (liveUid !== undefined && event.kbuid !== liveUid) {
      steps.push(
        skipped(
          `an earlier object of this name (uid ${event.kbuid}), deleted since: not replayed (its writes would meet today's object, and its ctx.once records went with it)`,
        ),
      );
      continue;
    }
    const [recordedGroup, recordedIn] = event.data?.apiVersion.split('/') ?? [];
    if (
      deps.versions !== undefined &&
      recordedGroup === deps.key.group &&
      recordedIn !== undefined &&
      !deps.versions.includes(recordedIn)
    ) {
      // the reconciler would read the object again from the apiserver in its own version
      steps.push(
        skipped(
          `recorded as ${event.data?.apiVersion ?? ''}, a version this release does not define (it has ${deps.versions.join(', ')}): not replayed (it would read today's object, not this revision)`,
        ),
      );
      continue;
    }
    // What handling this revision came to is recorded in the next one (the status
    // write); what the reconciles before it read is the world just before it.
    const next = revisions[index + 1];
    const own = recordedOutcome(revision, revisions, outcomes, deps.controller);
    // the world the recorded reconcile read: as it was when it started; without
    // a record, as it was just before the next revision
    const snapshot = own?.started ?? next?.seq ?? Number.MAX_SAFE_INTEGER;
    const captured: Record<string, unknown>[] = [];
    const client = new RecordingClient(deps.kubeConfig, metrics, { dryRun: true });
    client.madeAfterRevision = (key) => madeAfter(key, snapshot, event.kbrv);
    client.asOfRevision = async (path, answer) => {
      const target = keyFromPath(path);
      // a status write is captured, not sent: only object writes come here
      if (target === undefined || path.split('?')[0]?.endsWith('/status') === true) return answer;
      return withStatusAsOf(answer, await asOf(target, snapshot));
    };
    const reconciler = deps.build({
      // the replayed object, and everything it reads, as they were at this revision
      reader: atRevision((key) =>
        keyString(key) === keyString(deps.key)
          ? Promise.resolve(opOf(event) === 'delete' ? undefined : event.data)
          : asOf(key, snapshot),
      ),
      listed: (resource, namespace) => listedAt(resource, namespace, snapshot),
      client,
      status: { publish: async (intent) => void captured.push(intent.status) },
      // the operator's own: a dry-run apply removes only what that manager set and no longer sends
      fieldManager: deps.fieldManager ?? 'kubebus-replay',
      instance: 'replay',
      // every write of every revision is sent (as a dry run): nothing is remembered
      applied: new AppliedObjects(0),
      ...(performed === undefined
        ? {}
        : { performed: performedAsOf(performed, new Date(event.time ?? Date.now())) }),
    });
    let error: string | undefined;
    let countable = false;
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
      countable = failureOfTheCode(failure);
    }
    // only the object's latest revision is judged by a failure: an older one's
    // writes meet today's objects (an immutable field changed since, an earlier
    // life's uid), which a dry run refuses whatever the code
    const latest = index === revisions.length - 1 && opOf(event) !== 'delete';
    // the recorded run stopped here (a dead letter, a TerminalError); replay runs the code anyway
    const stop = event.data === undefined ? undefined : recordedStop(event.data);
    const secretsUnsure = await notAsThen(client.secretsRead, revision.seq);
    const computed = captured.at(-1);
    const recorded = own?.status;
    const differences =
      computed === undefined || own === undefined
        ? []
        : diff(comparableStatus(recorded), comparableStatus(computed));
    const writes: ReplayWrite[] = [];
    for (const write of client.writes) {
      if (write.method === 'POST') {
        writes.push({ method: write.method, path: write.path, changes: 'created' });
        continue;
      }
      const target = keyFromPath(write.path);
      // the replayed object as this revision recorded it (what its reconcile read),
      // any other as it was just before
      const before =
        target === undefined
          ? undefined
          : keyString(target) === keyString(deps.key)
            ? opOf(event) === 'delete'
              ? undefined
              : event.data
            : ((await asOf(target, revision.seq)) ?? existedUnrecorded(write.live, event.time));
      writes.push({
        method: write.method,
        path: write.path,
        changes:
          before === undefined
            ? 'created'
            : withRemovals(
                writtenFields(before, write.answer, write.body),
                removedFields(write.live, write.answer, before),
              ),
      });
    }
    steps.push({
      ...headOf(revision),
      computed,
      recorded,
      ...compared(
        own !== undefined
          ? undefined
          : stop !== undefined && computed !== undefined
            ? stoppedAndNow(stop, event.data?.['status'], computed)
            : unreconciledWhy(revision, outcomes, deps.controller),
        secretsUnsure,
        differences,
      ),
      writes,
      ...(error === undefined ? {} : { error }),
      ...(stop === undefined ? {} : { recordedStop: stop }),
      ...(latest &&
      countable &&
      (failedWhereRecordedCame(own !== undefined, computed, error, secretsUnsure) ||
        failsWhereRecordedStopped(stop, computed, error, secretsUnsure))
        ? { failed: true as const }
        : {}),
    });
  }
  return steps;
}

/** ctx.once's records, read-only; undefined (every call answered 'done') where the bucket is not there. */
async function performedCallsOf(
  nc: NatsConnection,
  controller: string,
  log: Logger,
): Promise<PerformedCalls | undefined> {
  try {
    const kv = await new Kvm(nc).open(performedBucketOf(controller));
    return new PerformedCalls(kv, undefined, log);
  } catch (error) {
    log.debug({ err: error }, 'no records of external calls: replay answers every ctx.once "done"');
    return undefined;
  }
}

/**
 * Whether a revision counts as failed: its own reconcile came to a status
 * (recorded), this one threw before computing any, and no Secret it read
 * may have changed since (a Secret gone since fails it for that alone).
 */
export function failedWhereRecordedCame(
  recordedCame: boolean,
  computed: Record<string, unknown> | undefined,
  error: string | undefined,
  secretsUnsure: readonly string[],
): boolean {
  return (
    recordedCame && computed === undefined && error !== undefined && secretsUnsure.length === 0
  );
}

/** Where the recorded run stopped at a revision instead of reconciling it: parked, or a TerminalError. */
function recordedStop(object: KubeObject): string | undefined {
  if (isParked(object))
    return crashedItsProcess(object)
      ? 'parked for killing its process (not run: it would kill this one)'
      : 'parked after a dead letter';
  if (stoppedByTerminal(object)) return 'stopped by a TerminalError';
  return undefined;
}

/**
 * Whether a revision the recorded run stopped at (parked, a TerminalError)
 * fails again: the code still throws there, before any status, with no
 * Secret it read possibly changed since. What a fix is checked against.
 */
export function failsWhereRecordedStopped(
  stop: string | undefined,
  computed: Record<string, unknown> | undefined,
  error: string | undefined,
  secretsUnsure: readonly string[],
): boolean {
  return (
    stop !== undefined &&
    computed === undefined &&
    error !== undefined &&
    secretsUnsure.length === 0
  );
}

/**
 * What replay says of a revision the recorded run stopped at (parked, a
 * TerminalError) where the code now comes to a status: the same as the one
 * in place then, or another one — not counted, as a fix is expected to.
 */
export function stoppedAndNow(
  stop: string,
  inPlace: unknown,
  computed: Record<string, unknown>,
): string {
  const recorded = isRecord(inPlace) ? inPlace : undefined;
  return diff(comparableStatus(recorded), comparableStatus(computed)).length === 0
    ? `${stop} when recorded; the code comes to the status in place then again`
    : `${stop} when recorded; the code now comes to another status (${readySummary(computed)}): not counted`;
}

/** The Ready condition of a computed status, in a few words. */
function readySummary(status: Record<string, unknown>): string {
  const conditions = Array.isArray(status['conditions'])
    ? (status['conditions'] as Condition[])
    : undefined;
  const ready = findCondition(conditions, 'Ready');
  if (ready === undefined) return 'no Ready condition';
  return `Ready ${ready.status}, ${ready.reason}`;
}

/**
 * Whether a replay's failure says something of the code: not a dependency
 * that is down (transient), nor the replaying user's own access (401, 403).
 */
export function failureOfTheCode(failure: unknown): boolean {
  if (isKubeApiError(failure, 401) || isKubeApiError(failure, 403)) return false;
  // an outside system unreachable from where replay runs (CI) is not the code's failure either
  const failureClass = classifyFailure(failure);
  return failureClass !== FailureClasses.Transient && failureClass !== FailureClasses.External;
}

/** Whether the replay found what a CI check should fail on: a different status, or a failure. */
export function replayDiverged(steps: readonly ReplayStep[]): boolean {
  return steps.some((step) => step.differences.length > 0 || step.failed === true);
}

/**
 * The differences to report, or why there are none to: a revision never
 * reconciled on its own; one whose reconcile read the values of Secrets not
 * known to be as they were then (the bus records no values, so they are read
 * as they are today) — a status computed from them may differ for that alone,
 * so it is shown, not counted.
 */
/** A step's revision: its sequence, operation, resourceVersion and generation. */
function headOf({ seq, event }: Revision) {
  return {
    seq,
    op: opOf(event),
    resourceVersion: event.kbrv,
    generation: event.kbgeneration,
  };
}

/**
 * Why a revision has no recorded status to compare with: its reconciles all
 * failed (the last one's result and error), or none ran on its own.
 */
export function unreconciledWhy(
  revision: Revision,
  outcomes: readonly OutcomeRecord[],
  controller: string,
): string {
  const last = outcomes
    .filter((o) => o.controller === controller && o.eventId === revision.event.id)
    .at(-1);
  if (last === undefined) return 'not reconciled on its own (coalesced into a later change)';
  if (
    last.result === 'success' ||
    last.result === 'requeue_after' ||
    last.result === 'terminal_error'
  )
    return 'its status write is no longer in the history (aged out): nothing to compare';
  const why = last.error ?? last.note;
  return `its reconciles came to no status (the last: ${last.result}${why === undefined ? '' : `, ${why.split('\n')[0] ?? ''}`}): nothing to compare`;
}

export function compared(
  unreconciled: string | undefined,
  secretsUnsure: readonly string[],
  differences: Change[],
): Pick<ReplayStep, 'differences' | 'uncompared'> {
  if (unreconciled !== undefined) return { differences: [], uncompared: unreconciled };
  if (differences.length > 0 && secretsUnsure.length > 0)
    return {
      differences: [],
      uncompared: `status differs, but it read the values of ${secretsUnsure.join(', ')} as they are today, not as they were (the bus records no values): not compared — ${differences
        .map((change) => `status.${change.path}`)
        .join(', ')}`,
    };
  return { differences };
}

export function formatReplay(steps: readonly ReplayStep[]): string {
  if (steps.length === 0) return 'no recorded history\n';
  const lines: string[] = [];
  for (const step of steps) {
    const head = `#${step.seq} ${step.op} rv ${step.resourceVersion}${step.generation === undefined ? '' : ` generation ${step.generation}`}`;
    if (step.notReplayed !== undefined) {
      lines.push(`${head}: ${step.notReplayed}`);
    } else if (step.computed === undefined) {
      lines.push(
        `${head}: no status computed${step.error === undefined ? '' : ` (${step.error})`}${step.failed !== true ? '' : step.recordedStop === undefined ? '; its recorded reconcile came to a status: failed' : `; ${step.recordedStop} when recorded, and still fails`}`,
      );
    } else if (step.uncompared !== undefined) {
      lines.push(
        `${head}: ${step.uncompared}${step.error === undefined ? '' : ` (then: ${step.error})`}`,
      );
    } else if (step.differences.length === 0) {
      lines.push(
        `${head}: status same as recorded${step.error === undefined ? '' : ` (then: ${step.error})`}`,
      );
    } else {
      lines.push(`${head}: status differs from recorded`);
      for (const change of step.differences)
        lines.push(`    ${formatChange({ ...change, path: `status.${change.path}` })}`);
    }
    for (const write of step.writes) {
      const what =
        write.changes === 'created'
          ? 'would create it'
          : write.changes.length === 0
            ? 'no change'
            : `would change ${write.changes.length} field${write.changes.length === 1 ? '' : 's'}`;
      lines.push(`    write ${write.method} ${write.path}: ${what}`);
      if (write.changes !== 'created')
        for (const change of write.changes.slice(0, 10))
          lines.push(`        ${formatChange(change)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A revision recorded before a sequence number, or by a time. */
/** Whether one resourceVersion is later than another: both etcd revisions, else not known to be. */
function laterVersion(version: string, than: string): boolean {
  return /^\d+$/.test(version) && /^\d+$/.test(than) && BigInt(version) > BigInt(than);
}

function isBefore(revision: Revision, point: number | Date): boolean {
  if (typeof point === 'number') return revision.seq < point;
  const time = revision.event.time === undefined ? Number.NaN : Date.parse(revision.event.time);
  return !Number.isNaN(time) && time <= point.getTime();
}

const traceIdOf = (traceparent: string) => traceparent.split('-')[1] ?? traceparent;

/**
 * What the revision's own reconcile came to: the last successful outcome of
 * the controller for the revision's event, the status the status writer wrote
 * in the same trace (or, when it skipped a no-op, the status in place then),
 * and when that reconcile started. Undefined when the revision was never
 * reconciled on its own.
 */
export function recordedOutcome(
  revision: Revision,
  revisions: readonly Revision[],
  outcomes: readonly OutcomeRecord[],
  controller: string,
): { status: Record<string, unknown> | undefined; started: Date } | undefined {
  const reconcile = outcomes
    .filter(
      (o) =>
        o.controller === controller &&
        // a terminal error came to a status too (Ready=False with its message)
        (o.result === 'success' || o.result === 'requeue_after' || o.result === 'terminal_error') &&
        o.eventId === revision.event.id,
    )
    .at(-1);
  if (reconcile === undefined) return undefined;
  const started = new Date(Date.parse(reconcile.at) - reconcile.ms);
  const trace = traceIdOf(reconcile.traceparent);
  // the status write of that reconcile: same trace (requeues share it), after it started
  const write = outcomes.find(
    (o) =>
      isStatusWriterOf(o.controller, controller) &&
      traceIdOf(o.traceparent) === trace &&
      Date.parse(o.at) >= started.getTime(),
  );
  const statusOf = (r: Revision | undefined) =>
    r?.event.data?.['status'] as Record<string, unknown> | undefined;
  if (write?.wrote !== undefined) {
    const written = revisions.find((r) => r.event.kbrv === write.wrote);
    // the written revision is gone from the history (limits): nothing to compare with
    return written === undefined ? undefined : { status: statusOf(written), started };
  }
  // no write (a no-op skipped, or none needed): the status in place when it was decided
  const decided = new Date(Date.parse((write ?? reconcile).at));
  const inPlace = revisions.filter((r) => r.seq >= revision.seq && isBefore(r, decided)).at(-1);
  return { status: statusOf(inPlace ?? revision), started };
}

/** A reader from a function of one key (reads of several are made one by one). */
function atRevision(read: (key: ObjectKey) => Promise<KubeObject | undefined>) {
  return { read, readAll: (keys: readonly ObjectKey[]) => Promise.all(keys.map(read)) };
}

/** The object key of an object's API path (…/namespaces/<ns>/<resource>/<name>[/status]). */
function keyFromPath(path: string): ObjectKey | undefined {
  const match =
    /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)\/([^/]+)(?:\/status)?$/.exec(
      path.split('?')[0] ?? '',
    );
  if (match === null) return undefined;
  return {
    group: match[1] ?? '',
    namespace: decodeURIComponent(match[2] ?? ''),
    resource: match[3] ?? '',
    name: decodeURIComponent(match[4] ?? ''),
  };
}

/** The status writer's outcomes of `controller`: its own origin, or the shared one before (ADR 0015). */
function isStatusWriterOf(recordedBy: string, controller: string): boolean {
  const { role, operator } = originOf(recordedBy);
  return role === ROLE_ORIGINS.statusWriter && (operator === undefined || operator === controller);
}
