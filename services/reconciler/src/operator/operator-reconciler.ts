// Any operator's reconcile, run the same way: read the object from the bus,
// finalize it when it is going, leave it alone while it is parked, refuse a
// spec its schema rejects (InvalidSpec, one Warning Event per generation, no
// retries), keep the finalizer, call the operator's reconcile, prune what it
// no longer applies, and publish the status it returns with Ready and Degraded.
import {
  BatchingReader,
  isParked,
  crashedItsProcess,
  leaveParked,
  isOwnChange,
  serverAtLeast,
  type BusConnection,
  type ObjectReader,
  type OwnWrites,
  type PerformedCalls,
  type StaleReadOutcome,
  type StatusPublisher,
} from '@kubebus/shared/bus';
import {
  classifyFailure,
  explainRefused,
  FailureClasses,
  markOperatorError,
  cutChars,
  publicText,
} from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import {
  hasFinalizer,
  isAlreadyRecorded,
  objectPath,
  onceEventName,
  recordEvent,
  releaseFinalizer,
  setFinalizer,
  type AppliedObjects,
  type EventInput,
  type EventRecorder,
  type KubeClient,
} from '@kubebus/shared/kube';
import {
  isTerminalError,
  TerminalError,
  type ConditionStatus,
  type Operator,
  type Resource,
  type RuntimeContext,
} from '@kubebus/shared/definition';
import type {
  ReconcileRequest,
  Reconciler,
  RuntimeResult,
  WorkerContext,
} from '@kubebus/shared/runtime';
import { fenced } from './fenced.js';
import { KnownResources, refOf } from './known-resources.js';
import { ApiserverLister, BusLister, type ObjectLister } from './object-lister.js';
import { operatorContext } from './operator-context.js';
import { rereadWith, StorageVersionReader } from './storage-version.js';
import { describeInvalidSpec } from './spec-as-written.js';
import { AppliedByOwner, mayHaveDropped, prunedKinds, pruneOwned } from './pruning.js';
import { ReleasedFinalizers } from './released-finalizers.js';
import { alreadyOwnedOf } from './ownership.js';
import {
  ALREADY_OWNED,
  alreadyNotReady,
  alreadyInvalid,
  alreadyTerminal,
  describeIssues,
  FORBIDDEN,
  notReadyAt,
  notReadyStatus,
  alreadyUnreachable,
  unreachableStatus,
  invalidSpecStatus,
  reconciledStatus,
  stoppedByTerminal,
  terminalStatus,
  type Status,
} from './status.js';
import { CALLS_BOUND_MS, InFlightCalls, endingWith } from './in-flight-calls.js';
import {
  checkedFinalizeFields,
  FINALIZING,
  finalizeReport,
  finalizeWait,
  finalizingStatus,
  type FinalizeReport,
} from './finalize-wait.js';
import {
  answeredUnavailable,
  RETRYING,
  retryAnnounced,
  retryMessage,
  retryNote,
  waitAnnounced,
  waitNote,
} from './retry-event.js';
import { loopNote, readStamp, roundInputs, STATUS_LOOP, StatusLoops } from './status-loop.js';

export interface OperatorReconcilerDeps {
  readonly reader: Pick<ObjectReader, 'read' | 'readAll'>;
  readonly client: KubeClient;
  /** `own` (the status of this process' pending intent): read-your-own-writes for the primary's status */
  readonly status: Pick<StatusPublisher, 'publish'> & Partial<Pick<StatusPublisher, 'own'>>;
  readonly fieldManager: string;
  readonly instance: string;
  readonly applied: AppliedObjects;
  /** what this process wrote (ctx.apply, the finalizer): read-your-own-writes */
  readonly ownWrites?: OwnWrites;
  readonly onParked?: () => void;
  /** a read of the primary older than this process' own last status intent for it (ADR 0019) */
  readonly onStaleRead?: (outcome: StaleReadOutcome) => void;
  /** replay: writes are dry runs, finalize is not called */
  readonly dryRun?: boolean;
  /** what the operator's setup made (ctx.deps) */
  readonly deps?: unknown;
  /** the bus ctx.list and pruning read from; without it they list from the apiserver */
  readonly bus?: BusConnection;
  /** replay: ctx.list as of the revision */
  readonly listed?: ObjectLister['list'];
  /** Events sent in the background (ADR 0029); without it (replay) each is sent before the reconcile goes on */
  readonly events?: EventRecorder;
  /** ctx.once's records of the calls made (performed-calls.ts); replay's, as of its revision */
  readonly performed?: Pick<PerformedCalls, 'find' | 'claim' | 'made' | 'release' | 'forget'>;
  /** how often an apply refused another owner's name is looked at again (KUBEBUS_CLAIM_RETRY) */
  readonly claimRetryMs?: number;
}

export class OperatorReconciler implements Reconciler {
  readonly #known: KnownResources;
  readonly #reads: BatchingReader;
  readonly #lister: ObjectLister;
  readonly #pruned: readonly Resource[];
  /** rounds that write a new status only because the last write started them */
  readonly #statusLoops = new StatusLoops();
  /** what each owner's last successful reconcile applied: pruning without listing */
  readonly #applied = new AppliedByOwner();
  /** whose finalizer this process released: a lagging record of them is not finalized again */
  readonly #released = new ReleasedFinalizers();
  /** the storage apiVersion, computed once: a recorded object in it is used as it is */
  readonly #storage: StorageVersionReader;

  constructor(
    private readonly operator: Operator,
    private readonly deps: OperatorReconcilerDeps,
  ) {
    this.#known = new KnownResources(operator);
    this.#reads = new BatchingReader(deps.reader);
    const { listed } = deps;
    this.#lister =
      listed !== undefined
        ? { list: listed }
        : deps.bus === undefined
          ? new ApiserverLister(deps.client)
          : new BusLister(deps.bus, deps.client, serverAtLeast(deps.bus.nc, '2.11.0'));
    this.#pruned = prunedKinds(operator);
    this.#storage = new StorageVersionReader(operator.for, deps.client);
  }

  async reconcile(request: ReconcileRequest, runtime: WorkerContext): Promise<RuntimeResult> {
    const read = await this.#read(request);
    if (read === undefined) {
      // gone: owned objects are garbage-collected, the records of its external calls
      // purged — once the apiserver says so too: a deletion on the bus is only what its
      // publisher said, and purged records would make every call again
      const { performed } = this.deps;
      // a read that fails purges nothing: a later deletion round does
      const gone =
        this.deps.dryRun !== true &&
        performed !== undefined &&
        (await this.#live(request.key).then(
          (live) => live === undefined,
          () => false,
        ));
      if (gone) await performed.forget(request.key);
      return { skipped: 'the object no longer exists' };
    }
    // what the reconcile sees: the status with this process' own pending intent in place
    const { recorded, object } = read;
    if (object.metadata.deletionTimestamp !== undefined)
      return this.#finalize(recorded, object, runtime, isOwnChange(request.body));
    // replay runs the code at every revision: would it still stop there? Not one that
    // killed its process: it would kill replay's
    const replayed = this.deps.dryRun === true && !crashedItsProcess(object);
    if (!replayed && stoppedByTerminal(object) && isOwnChange(request.body)) {
      // a TerminalError at this generation: its own status write (or any change of it
      // that leaves the spec alone) starts no other round; a watched object's change does
      runtime.log.debug('stopped by a TerminalError at this generation: waiting for a change');
      return {
        skipped:
          'stopped by a TerminalError at this generation: waiting for a change of it or of what it watches',
      };
    }
    if (!replayed && leaveParked(request, object)) {
      // dead-lettered at this generation: a spec change or a re-drive runs it again
      this.deps.onParked?.();
      runtime.log.debug('parked at this generation: waiting for a spec change or a re-drive');
      return { skipped: 'parked after a dead letter: waiting for a spec change or a re-drive' };
    }

    const { definition } = this.operator.for;
    const parsed = definition.spec.safeParse(object['spec'] ?? {});
    if (!parsed.success) {
      const message = await this.#describeInvalidSpec(object, parsed.error.issues, runtime);
      await this.#publishStatus(
        recorded,
        invalidSpecStatus(object, message, this.operator.invalidSpec?.(message)),
        runtime,
      );
      if (!alreadyInvalid(object)) await this.#event(object, 'Warning', 'InvalidSpec', message);
      throw new TerminalError(`invalid spec: ${message}`);
    }

    // The finalizer goes on before anything external exists, so nothing is leaked.
    if (this.operator.finalize !== undefined && !hasFinalizer(object, this.operator.finalizer))
      await this.#setFinalizer(object, true, runtime);

    const touched = new Set<string>();
    const calls = new InFlightCalls();
    /** what the round read through ctx, by resourceVersion: a status loop reads the same */
    const inputs = new Set<string>();
    const context = this.#context(object, runtime, touched, calls, inputs);
    this.#statusLoops.begun(object.metadata.uid);
    let result;
    try {
      result = await endingWith(
        calls,
        () =>
          operatorCode(() => this.operator.reconcile({ ...object, spec: parsed.data }, context)),
        endOptions(runtime),
      );
    } catch (error) {
      await this.#showFailure(recorded, object, error, runtime, { terminal: true });
      throw error;
    }
    const status = result?.status === undefined ? undefined : this.#checkedStatus(result.status);
    // revoked meanwhile (the partition's lease lost): its status is another reconcile's to publish
    runtime.signal.throwIfAborted();
    // only after success (a throw above skips it), never in a dry run (replay), and not
    // while the reconcile says it is not done (Ready=False: one waiting for a dependency
    // returns early, and what it did not apply is not what it no longer wants)
    if (this.deps.dryRun !== true && this.#pruned.length > 0) {
      const { uid } = object.metadata;
      const previous = this.#applied.get(uid);
      // listing finds every child; what a not-ready reconcile owed one is kept for the next
      const list =
        this.#applied.mustList(uid) ||
        ((previous === undefined || this.#applied.partial(uid)) &&
          mayHaveDropped(object, request.body));
      if (reportsNotReady(result?.ready)) this.#applied.defer(uid, touched, list);
      else await this.#prune(object, touched, list ? undefined : previous, list, runtime);
    }
    const next = reconciledStatus(object, status, result?.ready, result?.conditions ?? []);
    this.#noticeLoop(object, next, request, runtime, () => roundInputs(object, inputs));
    // the reconcile's last word: its worker may move on while the status is written
    await this.#publishStatus(recorded, next, runtime, runtime.releaseWorker);
    const requeueAfterMs = result?.requeueAfterMs;
    return requeueAfterMs !== undefined && requeueAfterMs > 0 ? { requeueAfterMs } : undefined;
  }

  /** A status that changes at every round its own write started: said once, in the log and on the object. */
  #noticeLoop(
    object: KubeObject,
    next: Status,
    request: ReconcileRequest,
    runtime: WorkerContext,
    inputs: () => string,
  ) {
    // replay says nothing; a revoked round's lease is another's to speak for
    if (this.deps.dryRun === true || runtime.signal.aborted) return;
    const fields = this.#statusLoops.observe(object, next, isOwnChange(request.body), inputs);
    if (fields === undefined) return;
    const note = loopNote(fields);
    runtime.log.warn({ fields }, note);
    void this.#event(object, 'Warning', STATUS_LOOP, note, 'Reconcile').catch((error: unknown) => {
      runtime.log.debug({ err: error }, 'could not record the status loop on the object');
    });
  }

  /**
   * A counted failure that repeats shows on the object (kubectl describe) before its letter
   * does, at the 2nd, 4th, 8th… attempt; one the apiserver keeps refusing for this request
   * (a webhook failing, the namespace not there yet) is waited out without limit, and
   * shows at the 4th, 8th, 16th… failure in a row; a cluster-wide outage and a wait
   * ("not now") are the logs'.
   */
  async #announceRetry(
    recorded: KubeObject,
    object: KubeObject,
    error: unknown,
    runtime: WorkerContext,
  ) {
    if (runtime.signal.aborted || this.deps.dryRun === true) return;
    const failure = classifyFailure(error);
    if (failure === FailureClasses.External)
      await this.#reportUnreachable(recorded, object, error, runtime);
    if (failure === FailureClasses.Transient) {
      const status = answeredUnavailable(error);
      const failuresInARow = runtime.failuresInARow ?? 0;
      if (status === undefined || !waitAnnounced(failuresInARow)) return;
      await this.#showRetrying(recorded, object, error, runtime);
      const note = waitNote(failuresInARow + 1, status, error);
      await this.#event(object, 'Warning', RETRYING, note, 'Reconcile');
      return;
    }
    if (!retryAnnounced(runtime.attempt)) return;
    // an outside system's outage already says Unreachable there
    if (failure !== FailureClasses.External)
      await this.#showRetrying(recorded, object, error, runtime);
    await this.#event(object, 'Warning', RETRYING, retryNote(runtime.attempt, error), 'Reconcile');
  }

  /**
   * Ready=False, reason ReconcileRetrying, with the error's first line: without it,
   * `kubectl get` showed the last generation's Ready=True while this one failed.
   * Written once per generation, at its first announced attempt: the write is a
   * change of the object, which reconciles it at once — that round is the next
   * attempt, without its backoff — so it is paid once, where the backoff is
   * shortest; later messages are the Events'.
   */
  async #showRetrying(
    recorded: KubeObject,
    object: KubeObject,
    error: unknown,
    runtime: RuntimeContext,
  ): Promise<void> {
    const message = retryMessage(error);
    // parked, re-driven: Ready=False already, and a write's own change would be left
    // parked, dropping the retry that waits (the re-drive's budget never spent)
    if (isParked(object) || notReadyAt(object, RETRYING)) return;
    try {
      await this.#publishStatus(recorded, notReadyStatus(object, RETRYING, message), runtime);
    } catch (failure) {
      // the failure stays the outcome: its retry is what recovers
      runtime.log.warn({ err: failure }, 'could not report the retried failure on the object');
    }
  }

  /** Deletes the children this reconcile no longer applied, and remembers what it applied. */
  async #prune(
    object: KubeObject,
    touched: ReadonlySet<string>,
    previous: ReadonlySet<string> | undefined,
    list: boolean,
    runtime: WorkerContext,
  ): Promise<void> {
    await pruneOwned({
      kinds: this.#pruned,
      controller: this.operator.name,
      owner: object,
      touched,
      previous,
      list,
      read: (key) => this.deps.reader.read(key),
      lister: this.#lister,
      client: this.deps.client,
      log: runtime.log,
      signal: runtime.signal,
      ...(runtime.fence === undefined ? {} : { fence: runtime.fence }),
    });
    this.#applied.set(object.metadata.uid, touched);
  }

  /**
   * The primary from the bus (in the served version), never older than this
   * process' own last status intent for it (ADR 0019): a record of an earlier
   * generation is read again from the apiserver; a status from before the
   * intent is seen as the intent makes it. `recorded` keeps the status as
   * read: whether an intent is new is judged against it.
   */
  async #read(
    request: ReconcileRequest,
  ): Promise<{ recorded: KubeObject; object: KubeObject } | undefined> {
    const stored = await this.deps.reader.read(request.key);
    let recorded =
      stored === undefined || !this.#storage.needed(stored)
        ? stored
        : await this.#storage.convert(stored);
    if (recorded === undefined) return undefined;
    let own = this.#ownStatus(recorded);
    if (own === 'older') {
      const ref = refOf(this.operator.for);
      const { namespace = '', name } = recorded.metadata;
      recorded = await this.deps.client.getIfExists<KubeObject>(objectPath(ref, namespace, name));
      this.deps.onStaleRead?.('fell_back');
      if (recorded === undefined) return undefined;
      own = this.#ownStatus(recorded);
    }
    if (own === undefined || own === 'older') return { recorded, object: recorded };
    this.deps.onStaleRead?.('own_status');
    return { recorded, object: { ...recorded, status: own } };
  }

  #ownStatus(object: KubeObject) {
    const status = object['status'];
    return this.deps.status.own?.({
      uid: object.metadata.uid,
      generation: object.metadata.generation ?? 0,
      status: typeof status === 'object' && status !== null ? (status as Status) : {},
    });
  }

  async #finalize(
    recorded: KubeObject,
    object: KubeObject,
    runtime: WorkerContext,
    /** the round its own change started (a status write) */
    ownChange: boolean,
  ): Promise<RuntimeResult> {
    // being deleted: nothing of it is pruned any more, and its memory goes
    this.#applied.forget(object.metadata.uid);
    const operator = this.operator;
    if (!hasFinalizer(object, operator.finalizer)) return undefined;
    // the record is older than this process' own release of it (the bus behind)
    if (this.#released.has(object.metadata.uid))
      return { skipped: 'its finalizer was released here: the object is going' };
    if (this.deps.dryRun === true) return undefined; // finalize touches what replay must not
    // its cleanup runs only on the apiserver's word: a deletion on the bus is only what its
    // publisher said (a forged record would run the cleanup of a live object)
    const live = await this.#live({
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
    });
    if (
      live?.metadata.uid !== object.metadata.uid ||
      live.metadata.deletionTimestamp === undefined
    ) {
      // gone: released elsewhere, the bus behind; there and not being deleted: not what the
      // record says, which is worth a warning
      if (live !== undefined)
        runtime.log.warn(
          'the bus records the object being deleted, the apiserver does not: no finalize',
        );
      return { skipped: 'the apiserver does not show it being deleted: no finalize' };
    }
    // set by an earlier version that had `finalize`: no cleanup left to run, so
    // the object is let go rather than kept terminating for good
    if (operator.finalize === undefined) {
      await this.#setFinalizer(object, false, runtime);
      return undefined;
    }
    // finalize gets the spec as reconcile does, parsed (defaults in) — the apiserver's, which
    // says what it cleans up (ADR 0038); one that no longer parses cannot say what to clean
    // up: shown on the object, the finalizer kept
    const parsed = operator.for.definition.spec.safeParse(live['spec'] ?? {});
    if (!parsed.success) {
      const message = `cannot finalize: invalid spec: ${await this.#describeInvalidSpec(object, parsed.error.issues, runtime)}; fix the spec, or remove the finalizer ${operator.finalizer} to let it go without its cleanup`;
      await this.#reportTerminal(recorded, object, message, runtime);
      throw new TerminalError(message);
    }
    // A failure here throws: retried with backoff, and the object is not released.
    const calls = new InFlightCalls();
    const context = this.#context(object, runtime, new Set(), calls);
    const result = await endingWith(
      calls,
      () =>
        operatorCode(
          () => operator.finalize?.({ ...live, spec: parsed.data }, context) ?? Promise.resolve(),
        ),
      endOptions(runtime),
    ).catch(async (error: unknown) => {
      await this.#showFailure(recorded, object, error, runtime, { terminal: false });
      throw error;
    });
    // not done yet (a child still terminating): kept, and asked again as a requeue, not a failure
    const requeueAfterMs = finalizeWait(result);
    if (requeueAfterMs !== undefined) {
      const { status: returned, ...report } = finalizeReport(result);
      // the fields it returned, checked alone (the status it has may lack what the schema
      // requires: an object deleted before its first reconcile); refused ones are left out
      // and said, never a failure: the wait stays the outcome
      const fields = returned === undefined ? undefined : this.#finalizeFields(returned, runtime);
      // a round the last Finalizing write started (a change of its own while it shows it)
      // writes no new one: a message new at every look (a clock) would otherwise start the
      // next look at once, for ever. It still looks, and waits again: skipping the look
      // would ack the mark, and a wait it replaced would be lost
      if (!(ownChange && notReadyAt(object, FINALIZING)))
        await this.#reportFinalizing(recorded, object, runtime, {
          ...report,
          ...(fields === undefined ? {} : { status: fields }),
        });
      return { requeueAfterMs };
    }
    // revoked meanwhile: releasing the object is the reconcile's that holds the partition now
    await this.#setFinalizer(object, false, runtime);
    return undefined;
  }

  /** The status fields a waiting finalize returned that its schema takes; the rest said in a warning. */
  #finalizeFields(
    fields: Record<string, unknown>,
    runtime: RuntimeContext,
  ): Record<string, unknown> | undefined {
    const checked = checkedFinalizeFields(this.operator.for.definition.status, fields);
    if (checked.refused !== undefined)
      runtime.log.warn(
        { refused: checked.refused },
        'finalize returned status fields its schema rejects: shown without them',
      );
    return Object.keys(checked.fields).length === 0 ? undefined : checked.fields;
  }

  /** The primary as the apiserver has it now (one GET): what deletions on the bus are checked against. */
  #live(key: {
    readonly namespace: string;
    readonly name: string;
  }): Promise<KubeObject | undefined> {
    return this.deps.client.getIfExists<KubeObject>(
      objectPath(refOf(this.operator.for), key.namespace, key.name),
    );
  }

  /** A status reconcile returned, as its schema parses it; a bug of the operator's code when it does not. */
  #checkedStatus(status: unknown): Status {
    const checked = this.operator.for.definition.status.safeParse(status);
    if (!checked.success)
      throw new Error(
        `reconcile returned a status its schema rejects: ${describeIssues(checked.error.issues, 'status')}`,
      );
    return checked.data as Status;
  }

  /** Ready=False, reason Finalizing: why the object is still there, with what finalize said. */
  async #reportFinalizing(
    recorded: KubeObject,
    object: KubeObject,
    runtime: RuntimeContext,
    report: FinalizeReport,
  ): Promise<void> {
    try {
      await this.#publishStatus(
        recorded,
        finalizingStatus(object, this.operator.finalizer, report),
        runtime,
      );
    } catch (error) {
      // the wait stays the outcome: a failed report must not make it a retry
      runtime.log.warn({ err: error }, 'could not show on the object that finalize waits');
    }
  }

  /** An invalid spec's problems, in the fields of the version its author wrote it in. */
  #describeInvalidSpec(
    object: KubeObject,
    issues: Parameters<typeof describeIssues>[0],
    runtime: RuntimeContext,
  ): Promise<string> {
    const { fieldManager } = this.deps;
    return describeInvalidSpec({
      resource: this.operator.for,
      object,
      issues,
      read: rereadWith(this.deps.client, this.operator.for, object),
      // the finalizer's manager too (kube/apply.ts): neither ever writes the spec
      ours: new Set([fieldManager, `${fieldManager}-finalizer`]),
      log: runtime.log,
    });
  }

  #context(
    object: KubeObject,
    runtime: RuntimeContext,
    touched: Set<string>,
    calls: InFlightCalls,
    read?: Set<string>,
  ) {
    return operatorContext(
      {
        ...this.deps,
        // the reads of applies sent together (Promise.all) go as one request
        reader: this.#reads,
        lister: this.#lister,
        ...(read === undefined
          ? {}
          : {
              seen: (found: KubeObject) => {
                read.add(readStamp(object, found));
              },
            }),
        operator: this.operator,
        known: this.#known,
        dryRun: this.deps.dryRun ?? false,
        deps: this.deps.deps,
        storage: this.#storage,
        touched,
        calls,
      },
      object,
      runtime,
    );
  }

  async #setFinalizer(object: KubeObject, present: boolean, runtime: RuntimeContext) {
    fenced(runtime);
    const ref = refOf(this.operator.for);
    const written = await setFinalizer(
      this.deps.client,
      ref,
      object,
      this.operator.finalizer,
      present,
      this.deps.fieldManager,
    );
    // a released object is going: its deletion is what later reads find, and
    // until then a record still showing the finalizer is not finalized again
    if (!present) {
      // an entry the apply did not take away is another manager's (an earlier
      // name or field manager of this operator): removed by itself, or the
      // object would stay terminating while this process thinks it released
      await releaseFinalizer(this.deps.client, ref, written, this.operator.finalizer);
      this.#released.released(object.metadata.uid);
      return;
    }
    const namespace = object.metadata.namespace ?? '';
    const { name } = object.metadata;
    const key = { group: ref.group, resource: ref.resource, namespace, name };
    this.deps.ownWrites?.wrote(key, written, objectPath(ref, namespace, name), key);
  }

  async #publishStatus(
    object: KubeObject,
    status: Status,
    runtime: RuntimeContext,
    releaseWorker?: () => void,
  ) {
    fenced(runtime);
    // with the status as read: an intent already in place (or on its way) is not sent again
    const current = (object['status'] ?? {}) as Record<string, unknown>;
    await this.deps.status.publish(
      {
        key: {
          group: this.operator.for.group,
          resource: this.operator.for.plural,
          namespace: object.metadata.namespace ?? '',
          name: object.metadata.name,
        },
        apiVersion: object.apiVersion,
        kind: object.kind,
        uid: object.metadata.uid,
        observedGeneration: object.metadata.generation ?? 0,
        status,
        traceparent: runtime.traceparent,
        reconcileId: runtime.reconcileId,
      },
      current,
      // written in process (ADR 0028): fenced right before the write, as every write is
      {
        fence: () => {
          fenced(runtime);
        },
        signal: runtime.signal,
        ...(releaseWorker === undefined ? {} : { releaseWorker }),
      },
    );
  }

  /** Ready=False with the TerminalError's message, and one Warning Event per generation and message. */
  async #reportTerminal(
    recorded: KubeObject,
    object: KubeObject,
    message: string,
    runtime: RuntimeContext,
  ): Promise<void> {
    const repeated = alreadyTerminal(object, message);
    try {
      await this.#publishStatus(recorded, terminalStatus(object, message), runtime);
      if (!repeated) await this.#event(object, 'Warning', 'ReconcileFailed', message, 'Reconcile');
    } catch (error) {
      // the terminal error stays the outcome: a failed report must not make it a retry
      runtime.log.warn({ err: error }, 'could not report the terminal error on the object');
    }
  }

  /**
   * What a failed reconcile (or finalize) shows on the object, besides its retry
   * or letter. `terminal`: a TerminalError stops it until the object changes.
   */
  async #showFailure(
    recorded: KubeObject,
    object: KubeObject,
    error: unknown,
    runtime: WorkerContext,
    { terminal }: { terminal: boolean },
  ): Promise<void> {
    const aborted = runtime.signal.aborted;
    const refusedName = alreadyOwnedOf(error);
    // not retried until the object changes: say so on the object, not only in a log
    if (terminal && isTerminalError(error) && !aborted)
      await this.#reportTerminal(recorded, object, error.message, runtime);
    // retried until an admin applies the operator's RBAC (a new version's cleanup
    // too): what to apply, on the object
    else if (classifyFailure(error) === FailureClasses.Forbidden && !aborted)
      await this.#reportForbidden(recorded, object, error, runtime);
    // looked at again until the other owner lets the name go: why, on the object
    else if (refusedName !== undefined && !aborted)
      await this.#reportAlreadyOwned(recorded, object, refusedName.message, runtime);
    // a counted failure that repeats (a cleanup whose outside system is down too)
    // shows on the object (kubectl describe) before its letter does; a wait ("not
    // now": the attempt does not advance) is the logs'
    else await this.#announceRetry(recorded, object, error, runtime);
  }

  /** Ready=False, reason AlreadyOwned, naming the other owner; one Warning Event per generation and message. */
  async #reportAlreadyOwned(
    recorded: KubeObject,
    object: KubeObject,
    message: string,
    runtime: WorkerContext,
  ): Promise<void> {
    // the refusal stays the outcome: its retry is what takes the name once it is free
    await this.#reportRefusal(recorded, object, ALREADY_OWNED, message, runtime);
  }

  /** Ready=False, reason Forbidden, saying what to apply; one Warning Event per generation and message. */
  async #reportForbidden(
    recorded: KubeObject,
    object: KubeObject,
    error: unknown,
    runtime: WorkerContext,
  ): Promise<void> {
    // the refusal stays the outcome: its retry is what recovers once the RBAC is applied
    await this.#reportRefusal(recorded, object, FORBIDDEN, explainRefused(error), runtime);
  }

  /**
   * A refusal retried until someone else acts, on the object: Ready=False with
   * the reason and message, and one Warning Event, once per generation and
   * message. A report that fails is logged: the refusal stays the outcome.
   */
  async #reportRefusal(
    recorded: KubeObject,
    object: KubeObject,
    reason: string,
    message: string,
    runtime: WorkerContext,
  ): Promise<void> {
    if (alreadyNotReady(object, reason, message)) return;
    // parked, re-driven: its Ready is the letter's, and a write's own change would be left
    // parked and drop the re-drive's waiting retry; an Event changes nothing of it, so the
    // refusal is said there, named once per generation and message (nothing on the object
    // marks it said: the apiserver's AlreadyExists does)
    if (isParked(object)) {
      const generation = String(object.metadata.generation ?? 0);
      await this.#event(object, 'Warning', reason, message, 'Reconcile', {
        once: `parked-refusal/${reason}/${generation}/${message}`,
      }).catch((failure: unknown) => {
        runtime.log.warn({ err: failure, reason }, 'could not report the refusal on the object');
      });
      return;
    }
    try {
      await this.#publishStatus(recorded, notReadyStatus(object, reason, message), runtime);
      await this.#event(object, 'Warning', reason, message, 'Reconcile');
    } catch (failure) {
      runtime.log.warn({ err: failure, reason }, 'could not report the refusal on the object');
    }
  }

  /**
   * An outside system the operator's code calls is down: Ready=False, reason
   * Unreachable, with what failed (its first cause included: "fetch failed"
   * alone says nothing), written once per message and generation. Retried
   * without limit, it would otherwise show only in thinning Events.
   */
  async #reportUnreachable(
    recorded: KubeObject,
    object: KubeObject,
    error: unknown,
    runtime: RuntimeContext,
  ) {
    const message = unreachableMessage(error);
    if (alreadyUnreachable(object, message) || isParked(object)) return;
    try {
      await this.#publishStatus(recorded, unreachableStatus(object, message), runtime);
    } catch (failure) {
      runtime.log.warn(
        { err: failure },
        'could not report the outside system’s outage on the object',
      );
    }
  }

  async #event(
    object: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
    action = 'Validate',
    { once }: { readonly once?: string } = {},
  ) {
    const input: EventInput = {
      type,
      reason,
      note,
      action,
      reportingController: `kubebus.dev/${this.operator.name}`,
      reportingInstance: this.deps.instance.slice(0, 128),
    };
    const name = once === undefined ? undefined : onceEventName(object, this.operator.name, once);
    if (this.deps.events === undefined)
      await recordEvent(this.deps.client, object, input, name === undefined ? {} : { name }).catch(
        (error: unknown) => {
          // named once: recorded before
          if (name === undefined || !isAlreadyRecorded(error)) throw error;
        },
      );
    else this.deps.events.record(object, input, undefined, name);
  }
}

/** A reconcile's end waits for its ctx calls until the signal aborts or the bound passes (ADR 0030). */
function endOptions(runtime: RuntimeContext) {
  return {
    signal: runtime.signal,
    onUnsettled: (reason: 'aborted' | 'overdue', running: number) => {
      runtime.log.warn(
        { running, reason },
        reason === 'overdue'
          ? `the reconcile ended with ${String(running)} ctx calls still running after ${String(CALLS_BOUND_MS / 1000)} s`
          : `the reconcile was stopped with ${String(running)} ctx calls still running`,
      );
    },
  };
}

/** A result's Ready says False (or Unknown): the reconcile is not done. */
function reportsNotReady(
  ready: { readonly status: ConditionStatus | boolean } | undefined,
): boolean {
  return ready !== undefined && ready.status !== true && ready.status !== 'True';
}

/** The operator's own code run: what escapes it is marked its own, unless a ctx call failed (error-origin.ts). */
async function operatorCode<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw markOperatorError(error);
  }
}

/** An outside system's failure in one line: the error and its first cause ("fetch failed: connect ECONNREFUSED …"). */
function unreachableMessage(error: unknown): string {
  const line = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n', 1)[0] ?? '';
  const cause = error instanceof Error ? error.cause : undefined;
  const text = cause === undefined ? line(error) : `${line(error)}: ${line(cause)}`;
  // redacted before the cut: a cut password would no longer look like one
  return cutChars(
    publicText(
      `an outside system the operator calls is unreachable, retried without limit: ${text}`,
    ),
    1_024,
  );
}
