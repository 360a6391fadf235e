// The user's operator, wrapped: every write its reconcile or finalize makes
// through ctx (apply, createOnce, delete, event, a declared call made by
// once) is counted and recorded with
// what the reconcile saw (the primary's revision, what it read by name or
// listed by kind: what pruning decides on), and one reconcile can be armed to crash right after
// its k-th write — once the bus has recorded that write, so the restarted
// operator sees it as a real one would after a crash. Each start of the roles
// runs a new incarnation of the wrapper: once one has crashed it does nothing
// more — the crashed reconcile, and every reconcile or write the dead
// incarnation is then asked for, is parked (never settles, so no retry, no
// status, no dead letter) until the driver abandons it as it stops the roles
// (or their signal aborts): it then rejects with AbandonedReconcile, which the
// runtime treats as an aborted reconcile — its work goes back to the bus,
// nothing acted on — so the roles' graceful stop, which drains in-flight
// reconciles, does not wait forever. Only the next incarnation is judged. The runtime itself is untouched: nothing of this costs
// anything outside `kubebus test`.
import {
  apiVersionOf,
  type DesiredObject,
  type Operator,
  type ReconcileContext,
  type Resource,
  type ResourceObject,
} from '@kubebus/shared/definition';
import { AbandonedReconcile } from '@kubebus/shared/runtime';
import { Zombie } from './zombie.js';

export interface Seen {
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  readonly deleting: boolean;
  /** performance.now() as the reconcile started (or the status intent came) */
  readonly startedAt: number;
}

export interface ReconcileRecord {
  /** the run's place key: the object's namespace, or its name when cluster-scoped (place.ts) */
  readonly key: string;
  readonly step: number;
  readonly call: 'reconcile' | 'finalize';
  readonly attempt: number;
  readonly seen: Seen;
  /** `get Kind name` and `list Kind`, in the order read */
  readonly reads: string[];
  readonly writes: string[];
  /** handed-over: paused by the handover schedule, its partition given to another instance */
  outcome: 'running' | 'ok' | 'error' | 'crashed' | 'handed-over';
}

/** What the recording shows of one object's reconciles. */
export interface Activity {
  readonly started: number;
  readonly running: number;
}

export interface CrashArm {
  readonly key: string;
  /** the workload step whose reconcile to stop (armed before the step is applied) */
  readonly step: number;
  readonly k: number;
  /** which reconcile of the step to stop: the first one that saw this */
  readonly matches: (seen: Seen) => boolean;
  /**
   * crash (default): the incarnation dies there; pause: the reconcile waits
   * there (zombie.ts); hold: it waits there as pause does, still running in
   * its own instance (the overlap schedule)
   */
  readonly mode?: 'crash' | 'pause' | 'hold';
}

/** Something to do as one reconcile starts, before it reads or writes anything of its own. */
export interface StartHook {
  readonly key: string;
  readonly step: number;
  /** the first reconcile of the step that saw this */
  readonly matches: (seen: Seen) => boolean;
  /** awaited before the reconcile's body runs (the lagging schedule holds the watcher's feed) */
  readonly run: () => Promise<void>;
}

type ArmResult = 'crashed' | 'paused' | 'unreached';

interface Armed extends CrashArm {
  taken?: ReconcileRecord;
  readonly settle: (result: ArmResult) => void;
}

/** How long a crash point waits for the bus to record the write (then crashes anyway). */
const RECORDED_WITHIN_MS = 10_000;

export class RecordingOperator {
  readonly records: ReconcileRecord[] = [];
  /** the workload step now running; set by the driver */
  step = -1;
  #armed: Armed | undefined;
  #atStart: (StartHook & { readonly taken: (record: ReconcileRecord) => void }) | undefined;
  /** the incarnation that crashed last; it and those before it are dead */
  #dead = -1;
  #incarnations = 0;
  /** the incarnations up to this one are abandoned: their calls end at once */
  #abandoned = -1;
  readonly #parked = new Set<() => void>();
  /** the reconcile the last pause took */
  zombie: Zombie | undefined;
  /** place key → declared external call → how many times it was made */
  readonly #effects = new Map<string, Map<string, number>>();

  constructor(private readonly operator: Operator) {}

  /** The user's operator, unwrapped (its name, resources, finalizer). */
  get definition(): Operator {
    return this.operator;
  }

  /** The operator for the next start of the roles. */
  incarnation(): Operator {
    const incarnation = this.#incarnations++;
    const reconcile = this.operator.reconcile.bind(this.operator);
    const finalize = this.operator.finalize?.bind(this.operator);
    return Object.freeze({
      ...this.operator,
      reconcile: (object: never, ctx: ReconcileContext<unknown>) =>
        this.#run(incarnation, 'reconcile', object, ctx, (c) => reconcile(object, c)),
      ...(finalize === undefined
        ? {}
        : {
            finalize: (object: never, ctx: ReconcileContext<unknown>) =>
              this.#run(incarnation, 'finalize', object, ctx, (c) => finalize(object, c)),
          }),
    });
  }

  /** Arms a crash; answers whether a reconcile reached the k-th write, or finished before it. */
  arm(arm: CrashArm): Promise<ArmResult> {
    return new Promise((resolve) => {
      this.#armed = { ...arm, settle: resolve };
    });
  }

  /** The dead incarnations are being stopped: their parked reconciles end, their work handed back. */
  abandon(): void {
    this.#abandoned = this.#dead;
    for (const end of this.#parked) end();
    this.#parked.clear();
  }

  /** A dead process's reconcile: it never settles until abandoned (or its signal aborts). */
  #park(incarnation: number, signal: AbortSignal): Promise<never> {
    return new Promise((_, reject) => {
      const end = () => {
        this.#parked.delete(end);
        reject(new AbandonedReconcile('the crashed process was stopped'));
      };
      if (signal.aborted || incarnation <= this.#abandoned) end();
      else {
        this.#parked.add(end);
        signal.addEventListener('abort', end, { once: true });
      }
    });
  }

  /** Runs the hook as the first matching reconcile starts; answers that reconcile's record. */
  atStart(hook: StartHook): Promise<ReconcileRecord> {
    return new Promise((resolve) => {
      this.#atStart = { ...hook, taken: resolve };
    });
  }

  disarm(): void {
    this.#armed?.settle('unreached');
    this.#armed = undefined;
    this.#atStart = undefined;
  }

  /** How many times each declared external call (ctx.once) was made for the place, by key. */
  effectsOf(key: string): Readonly<Record<string, number>> {
    return Object.fromEntries(this.#effects.get(key) ?? []);
  }

  #performed(place: string, effect: string): void {
    const counts = this.#effects.get(place) ?? new Map<string, number>();
    counts.set(effect, (counts.get(effect) ?? 0) + 1);
    this.#effects.set(place, counts);
  }

  /** How many reconciles of the object started, and how many still run. */
  activity(key: string): Activity {
    const records = this.recordsOf(key);
    return {
      started: records.length,
      running: records.filter((record) => record.outcome === 'running').length,
    };
  }

  /** Writes of the object's reconciles during a step. */
  recordsOf(key: string, step?: number): ReconcileRecord[] {
    return this.records.filter(
      (record) => record.key === key && (step === undefined || record.step === step),
    );
  }

  async #run<T>(
    incarnation: number,
    call: ReconcileRecord['call'],
    object: ResourceObject,
    ctx: ReconcileContext<unknown>,
    body: (ctx: ReconcileContext<unknown>) => Promise<T>,
  ): Promise<T> {
    if (incarnation <= this.#dead) return this.#park(incarnation, ctx.signal);
    const record: ReconcileRecord = {
      key: object.metadata.namespace || object.metadata.name,
      step: this.step,
      call,
      attempt: ctx.attempt,
      seen: {
        uid: object.metadata.uid,
        generation: object.metadata.generation ?? 0,
        resourceVersion: object.metadata.resourceVersion,
        deleting: object.metadata.deletionTimestamp !== undefined,
        startedAt: performance.now(),
      },
      reads: [],
      writes: [],
      outcome: 'running',
    };
    this.records.push(record);
    const armed = this.#armed;
    if (
      armed !== undefined &&
      armed.taken === undefined &&
      armed.key === record.key &&
      armed.step === record.step &&
      armed.matches(record.seen)
    )
      armed.taken = record;
    const hook = this.#atStart;
    if (hook?.key === record.key && hook.step === record.step && hook.matches(record.seen)) {
      this.#atStart = undefined;
      await hook.run();
      hook.taken(record);
    }
    try {
      const result = await body(this.#context(incarnation, ctx, record));
      if (record.outcome === 'running') record.outcome = 'ok';
      if (this.zombie?.record === record) this.zombie.end(undefined);
      return result;
    } catch (error) {
      if (record.outcome === 'running')
        record.outcome = error instanceof AbandonedReconcile ? 'crashed' : 'error';
      if (this.zombie?.record === record) this.zombie.end(error);
      throw error;
    } finally {
      if (
        armed?.taken === record &&
        record.outcome !== 'crashed' &&
        record.outcome !== 'handed-over' &&
        this.zombie?.record !== record
      ) {
        // the armed reconcile ended before its k-th write (not one paused there, then released)
        if (this.#armed === armed) this.#armed = undefined;
        armed.settle('unreached');
      }
    }
  }

  #context(
    incarnation: number,
    ctx: ReconcileContext<unknown>,
    record: ReconcileRecord,
  ): ReconcileContext<unknown> {
    const written = async <T>(
      what: string,
      write: () => Promise<T>,
      recorded: (result: T) => Promise<boolean>,
    ): Promise<T> => {
      if (incarnation <= this.#dead) return this.#park(incarnation, ctx.signal);
      const result = await write();
      record.writes.push(what);
      const armed = this.#armed;
      if (armed?.taken !== record || record.writes.length !== armed.k) return result;
      this.#armed = undefined;
      await until(() => recorded(result), RECORDED_WITHIN_MS);
      if (armed.mode === 'pause' || armed.mode === 'hold') {
        if (armed.mode === 'pause') record.outcome = 'handed-over';
        const zombie = new Zombie(record, ctx.signal);
        this.zombie = zombie;
        armed.settle('paused');
        await zombie.paused();
        return result;
      }
      record.outcome = 'crashed';
      this.#dead = incarnation;
      armed.settle('crashed');
      // the driver now abandons this, stops the roles and starts the next incarnation
      return this.#park(incarnation, ctx.signal);
    };
    const resourceOf = (first: Resource | DesiredObject): Resource | undefined =>
      'metadata' in first
        ? (this.operator.owns ?? []).find(
            (r) => apiVersionOf(r) === first.apiVersion && r.kind === first.kind,
          )
        : first;
    const nameOf = (first: Resource | DesiredObject, body: unknown) =>
      ('metadata' in first ? first : (body as DesiredObject)).metadata;
    const onBus = (resource: Resource | undefined, meta: { name: string; namespace?: string }) =>
      resource === undefined
        ? Promise.resolve(undefined)
        : ctx.get(resource, meta.name, meta.namespace).catch(() => undefined);
    // one implementation for both forms (kind + body, or a whole object), as the runtime's
    type Write<T> = (first: Resource | DesiredObject, body?: unknown) => Promise<T>;
    const apply = ctx.apply.bind(ctx) as Write<ResourceObject>;
    const createOnce = ctx.createOnce.bind(ctx) as Write<'created' | 'exists'>;
    return {
      ...ctx,
      get: ((resource: Resource, name: string, namespace?: string) => {
        record.reads.push(`get ${resource.kind} ${name}`);
        return ctx.get(resource, name, namespace);
      }) as ReconcileContext<unknown>['get'],
      list: ((resource: Resource, options?: Parameters<ReconcileContext<unknown>['list']>[1]) => {
        record.reads.push(`list ${resource.kind}`);
        return ctx.list(resource, options);
      }) as ReconcileContext<unknown>['list'],
      readSecret: (name, namespace) => {
        record.reads.push(`readSecret ${name}`);
        return ctx.readSecret(name, namespace);
      },
      apply: async (first: Resource | DesiredObject, body?: unknown) => {
        const resource = resourceOf(first);
        const meta = nameOf(first, body);
        return written(
          `apply ${resource?.kind ?? 'object'} ${meta.name}`,
          () => apply(first, body),
          async (applied) =>
            atLeast(
              (await onBus(resource, meta))?.metadata.resourceVersion,
              applied.metadata.resourceVersion,
            ),
        );
      },
      createOnce: async (first: Resource | DesiredObject, body?: unknown) => {
        const resource = resourceOf(first);
        const meta = nameOf(first, body);
        return written(
          `createOnce ${resource?.kind ?? 'object'} ${meta.name}`,
          () => createOnce(first, body),
          async () => (await onBus(resource, meta)) !== undefined,
        );
      },
      delete: (resource, name, namespace) =>
        written(
          `delete ${resource.kind} ${name}`,
          () => ctx.delete(resource, name, namespace),
          async (answer) => {
            const seen = await onBus(resource, {
              name,
              ...(namespace === undefined ? {} : { namespace }),
            });
            // one the apiserver keeps is recorded marked, not gone; 'absent' wrote nothing
            // (gone already, or not this owner's child to delete, and kept)
            if (answer === 'absent') return true;
            return answer === 'terminating'
              ? seen?.metadata.deletionTimestamp !== undefined
              : seen === undefined;
          },
        ),
      // the call itself is the write: a crash armed there comes after the call
      // and before the runtime records it made (the window `done` closes)
      once: (key, effect) =>
        ctx.once(key, {
          ...effect,
          perform: (idempotencyKey) =>
            written(
              `once ${key}`,
              async () => {
                await effect.perform(idempotencyKey);
                this.#performed(record.key, key);
              },
              () => Promise.resolve(true),
            ),
        }),
      event: (type, reason, message, options) =>
        written(
          `event ${type} ${reason}`,
          () => ctx.event(type, reason, message, options),
          () => Promise.resolve(true),
        ),
    };
  }
}

/** Whether the recorded resourceVersion is the written one or later (etcd's are integers). */
function atLeast(recorded: string | undefined, written: string | undefined): boolean {
  if (recorded === undefined) return false;
  if (written === undefined || recorded === written) return true;
  return /^\d+$/.test(recorded) && /^\d+$/.test(written) && BigInt(recorded) >= BigInt(written);
}

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await probe())) await delay(50);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
