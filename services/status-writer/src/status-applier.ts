// Applies one status intent: never a stale one (older generation than the
// object's, or for a re-created object), never a no-op, and as a server-side
// apply of /status under the writer's own field manager.
import {
  StatusIntentSchema,
  desiredStatus,
  statusInPlace,
  type StatusIntent,
} from '@kubebus/shared/bus';
import { classifyFailure, FailureClasses } from '@kubebus/shared/errors';
import type { KubeObject } from '@kubebus/shared/events';
import {
  apply,
  isKubeApiError,
  type KubeApiError,
  objectPath,
  type KubeClient,
  type ResourceRef,
} from '@kubebus/shared/kube';
import {
  TerminalError,
  type ReconcileRequest,
  type Reconciler,
  type RuntimeContext,
  type RuntimeResult,
} from '@kubebus/shared/runtime';
import type { StatusWriterMetrics } from './metrics.js';
import { WrittenStatus } from './written-status.js';

export function parseIntent(body: Uint8Array | undefined): StatusIntent {
  const parsed = StatusIntentSchema.safeParse(
    JSON.parse(new TextDecoder().decode(body ?? new Uint8Array())),
  );
  if (!parsed.success) throw new TerminalError(`malformed status intent: ${parsed.error.message}`);
  return parsed.data;
}

export function resourceOf(intent: StatusIntent): ResourceRef {
  const version = intent.apiVersion.includes('/')
    ? (intent.apiVersion.split('/')[1] ?? '')
    : intent.apiVersion;
  return {
    group: intent.key.group,
    version,
    resource: intent.key.resource,
    namespaced: intent.key.namespace !== '',
  };
}

type Decision =
  { apply: true; status: Record<string, unknown> } | { apply: false; reason: SkipReason };

type SkipReason = 'noop' | 'stale' | 'gone';

/** Why an intent was not written, as `kubebus history` and `status` show it. */
const SKIP_REASONS: Record<SkipReason, string> = {
  noop: 'the status is already in place',
  stale: 'a newer generation was observed: this intent is stale',
  gone: 'the object is gone or was re-created',
};

/** What to do with an intent, given the object as the apiserver has it now. */
export function judge(intent: StatusIntent, current: KubeObject | undefined): Decision {
  if (current === undefined || current.metadata.uid !== intent.uid)
    return { apply: false, reason: 'gone' };
  const status = (current['status'] ?? {}) as Record<string, unknown>;
  const observed =
    typeof status['observedGeneration'] === 'number' ? status['observedGeneration'] : -1;
  const generation = current.metadata.generation ?? 0;
  if (intent.observedGeneration < generation || intent.observedGeneration < observed) {
    return { apply: false, reason: 'stale' };
  }
  // the same rule the publisher applies before sending an intent (status-in-place.ts)
  const desired = desiredStatus(intent, status);
  return statusInPlace(desired, status)
    ? { apply: false, reason: 'noop' }
    : { apply: true, status: desired };
}

export interface StatusApplierDeps {
  readonly client: KubeClient;
  /** the object as last recorded on the bus (no apiserver request) */
  readonly read: (key: StatusIntent['key']) => Promise<KubeObject | undefined>;
  readonly fieldManager: string;
  readonly metrics: StatusWriterMetrics;
  /**
   * The operator's primary resource: an intent off the bus for another is not
   * written (anyone who may publish the operator's status subjects could name
   * any kind; its RBAC may reach further than its primary's status)
   */
  readonly primary?: { readonly group: string; readonly resource: string };
  /**
   * Told of each intent as it is taken, before anything is judged or written:
   * `kubebus test` parks one here to restart the writer between intent and write.
   */
  readonly taken?: IntentTaken;
}

/** A hold point for tests: the writer waits on it before it judges an intent. */
export type IntentTaken = (intent: StatusIntent, signal: AbortSignal) => Promise<void>;

export class StatusApplier implements Reconciler {
  readonly #written = new WrittenStatus();

  constructor(private readonly deps: StatusApplierDeps) {}

  async reconcile(request: ReconcileRequest, context: RuntimeContext): Promise<RuntimeResult> {
    const intent = parseIntent(request.body);
    const { primary } = this.deps;
    const group = intent.apiVersion.includes('/') ? intent.apiVersion.split('/')[0] : '';
    if (
      primary !== undefined &&
      (intent.key.group !== primary.group ||
        intent.key.resource !== primary.resource ||
        group !== primary.group)
    )
      throw new TerminalError(
        `a status intent for ${intent.key.resource}${intent.key.group === '' ? '' : `.${intent.key.group}`} (${intent.apiVersion}): this status writer writes only ${primary.resource}${primary.group === '' ? '' : `.${primary.group}`}`,
      );
    await this.deps.taken?.(intent, context.signal);
    return this.applyIntent(intent, context);
  }

  /** Judges the intent against the object as it is, and writes it unless stale, gone or in place. */
  async applyIntent(
    intent: StatusIntent,
    context: Pick<RuntimeContext, 'signal' | 'log' | 'fence'>,
  ): Promise<RuntimeResult> {
    const resource = resourceOf(intent);
    const { client, metrics } = this.deps;
    let current: KubeObject | undefined;
    try {
      current = await this.#current(intent, resource, context.signal);
    } catch (error) {
      return this.#failed(error);
    }
    const decision = judge(intent, current);
    if (!decision.apply) {
      metrics.skipped.inc({ reason: decision.reason });
      context.log.debug({ reason: decision.reason }, 'status intent skipped');
      return { skipped: SKIP_REASONS[decision.reason] };
    }
    const started = performance.now();
    let answer: KubeObject;
    // a writer paused past its partition's lease writes nothing when it goes on (ADR 0005)
    context.fence?.();
    try {
      answer = await apply(
        client,
        resource,
        {
          apiVersion: intent.apiVersion,
          kind: intent.kind,
          metadata: {
            name: intent.key.name,
            ...(intent.key.namespace === '' ? {} : { namespace: intent.key.namespace }),
            // a precondition: the patch fails (409) if the object was re-created meanwhile
            uid: intent.uid,
          },
          status: decision.status,
        },
        { fieldManager: this.deps.fieldManager, subresource: 'status', signal: context.signal },
      );
    } catch (error) {
      if (isKubeApiError(error, 404) || isKubeApiError(error, 409)) {
        this.#written.forget(intent.key);
        metrics.skipped.inc({ reason: 'gone' });
        return { skipped: SKIP_REASONS.gone }; // deleted or re-created meanwhile
      }
      return this.#failed(error);
    } finally {
      metrics.patchDuration.observe((performance.now() - started) / 1_000);
    }
    this.#written.remember(intent.key, answer, current?.metadata.resourceVersion);
    metrics.patches.inc({ result: 'applied' });
    // routine, once per write: the outcome record (`kubebus history`) and the metric keep it
    context.log.debug({ observedGeneration: intent.observedGeneration }, 'status applied');
    return { wrote: answer.metadata.resourceVersion };
  }

  /** The object to judge the intent against; the apiserver only when the bus has no record. */
  async #current(
    intent: StatusIntent,
    resource: ResourceRef,
    signal: AbortSignal,
  ): Promise<KubeObject | undefined> {
    const recorded = await this.deps.read(intent.key);
    if (recorded !== undefined) return this.#written.current(intent.key, recorded);
    try {
      const path = objectPath(resource, intent.key.namespace, intent.key.name);
      return await this.deps.client.request<KubeObject>(path, { signal });
    } catch (error) {
      if (isKubeApiError(error, 404)) return undefined;
      throw error;
    }
  }

  #failed(error: unknown): RuntimeResult {
    const failure = statusWriteFailure(error);
    this.deps.metrics.patches.inc({ result: failure === 'retried' ? 'error' : failure });
    if (failure === 'throttled')
      return { requeueAfterMs: (error as KubeApiError).retryAfterMs ?? 0 };
    if (failure === 'rejected') throw new TerminalError((error as Error).message, { cause: error });
    throw error;
  }
}

/**
 * What a failed status write becomes: waited for as the apiserver asks (429
 * with Retry-After), refused for good (the apiserver rejects this status), or
 * retried — a dependency away, or the writer's own RBAC refusing (no `patch
 * <plural>/status`), which an admin fixes and the retry then gets through.
 */
export function statusWriteFailure(error: unknown): 'throttled' | 'rejected' | 'retried' {
  if (isKubeApiError(error) && error.status === 429 && error.retryAfterMs !== undefined)
    return 'throttled';
  if (classifyFailure(error) === FailureClasses.Forbidden) return 'retried';
  if (isKubeApiError(error) && !error.retryable) return 'rejected';
  return 'retried';
}
