// LIST then WATCH one resource, for ever: resume from the cursor in KV; relist
// on 410 Gone (publishing synthetic deletes and updates for the gap); re-open a
// watch that errors, ends or goes silent, with jittered backoff; persist the
// cursor once everything before it is durably published.
import {
  classifyFailure,
  ErrorCodes,
  explainRefused,
  FailureClasses,
  hasCode,
} from '@kubebus/shared/errors';
import type { Submitted } from '@kubebus/shared/bus';
import type { KubeObject } from '@kubebus/shared/events';
import {
  isGone,
  listPages,
  watchEvents,
  type KubeClient,
  type WatchScope,
} from '@kubebus/shared/kube';
import type { Logger } from '@kubebus/shared/obs';
import { backoffDelay, type BackoffPolicy } from '@kubebus/shared/runtime';
import type { ChangePublisher } from './change-publisher.js';
import type { CursorStore } from './cursor-store.js';
import type { KnownObjects } from './known-objects.js';
import type { WatcherMetrics } from './metrics.js';
import { Progress } from './progress.js';
import type { WatchedResource } from './targets.js';

export interface ResourceWatcherOptions {
  readonly namespace: string;
  readonly labelSelector: string | undefined;
  readonly inactivityMs: number;
  readonly watchTimeoutMs: number;
  readonly listPageSize: number;
  readonly backoff: BackoffPolicy;
  readonly cursorFlushMs: number;
}

export interface ResourceWatcherDeps {
  readonly client: KubeClient;
  readonly changes: ChangePublisher;
  readonly cursors: CursorStore;
  readonly cursorKey: string;
  readonly known: KnownObjects;
  readonly metrics: WatcherMetrics;
  readonly log: Logger;
}

export class ResourceWatcher {
  readonly #scope: WatchScope;
  readonly #progress = new Progress();
  readonly #label: string;
  #synced = false;
  #lastActivity = Date.now();
  #persisted: string | undefined;

  constructor(
    readonly resource: WatchedResource,
    private readonly deps: ResourceWatcherDeps,
    private readonly options: ResourceWatcherOptions,
  ) {
    this.#scope = {
      resource,
      // Secrets are published without their data anyway: never hold it at all
      ...(resource.group === '' && resource.resource === 'secrets'
        ? { metadataOnly: { kind: resource.kind } }
        : {}),
      ...(options.namespace === '' ? {} : { namespace: options.namespace }),
      ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
    };
    this.#label =
      resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`;
  }

  /** True once the first list (or resumed watch) is under way. */
  get synced(): boolean {
    return this.#synced;
  }

  /** When the loop last made progress (an event, a bookmark, a reconnect). */
  get lastActivity(): number {
    return this.#lastActivity;
  }

  async run(signal: AbortSignal): Promise<void> {
    const flusher = setInterval(() => void this.#flushCursor(), this.options.cursorFlushMs);
    try {
      await this.#loop(signal);
    } finally {
      clearInterval(flusher);
      await this.#flushCursor();
    }
  }

  async #loop(signal: AbortSignal): Promise<void> {
    const log = this.deps.log;
    let resourceVersion = (await this.deps.cursors.read(this.deps.cursorKey))?.resourceVersion;
    this.#progress.reset(resourceVersion);
    this.#persisted = resourceVersion;
    if (resourceVersion !== undefined) log.info({ resourceVersion }, 'resuming watch from cursor');
    let failures = 0;
    while (!signal.aborted) {
      this.#lastActivity = Date.now();
      try {
        if (resourceVersion === undefined) resourceVersion = await this.#relist(signal);
        this.#synced = true;
        resourceVersion = await this.#watch(resourceVersion, signal);
        failures = 0;
        this.deps.metrics.watchRestarts.inc({ resource: this.#label, reason: 'closed' });
      } catch (error) {
        if (isAborted(signal)) break;
        if (isGone(error)) {
          log.warn({ resourceVersion }, 'watch expired (410 Gone): relisting');
          resourceVersion = undefined;
          continue;
        }
        const reason = hasCode(error, ErrorCodes.WatchStalled) ? 'stalled' : 'error';
        this.deps.metrics.watchRestarts.inc({ resource: this.#label, reason });
        const delay = backoffDelay(this.options.backoff, failures++);
        if (classifyFailure(error) === FailureClasses.Forbidden)
          // the watcher's own RBAC (a kind a new version watches): an admin must act
          log.error(
            { refused: explainRefused(error), delayMs: delay },
            'the watcher may not list or watch this resource; retrying until its RBAC allows it',
          );
        else log.warn({ err: error, delayMs: delay, reason }, 'watch interrupted; reconnecting');
        await sleep(delay, signal);
      }
    }
  }

  /** Lists everything, publishes what changed since the known state, returns the list's RV. */
  async #relist(signal: AbortSignal): Promise<string> {
    const { known, metrics, log } = this.deps;
    metrics.relists.inc({ resource: this.#label });
    const seen = new Set<string>();
    // a name listed under another uid than the one known (deleted and made again in the
    // gap): the old object's tombstone goes first, so the bus' last record of the name is
    // the live object, as a watch would have ordered them
    const knownUidOf = new Map<string, string>();
    for (const [uid, { namespace, name }] of known.entries())
      knownUidOf.set(`${namespace}/${name}`, uid);
    const tombstoned = new Set<string>();
    let listVersion = '';
    const publishTombstone = async (uid: string) => {
      const before = known.get(uid);
      if (before === undefined || tombstoned.has(uid) || !this.#inScope(before.namespace))
        return false;
      tombstoned.add(uid);
      const tombstone = known.tombstone(this.resource, uid, before);
      this.#progress.track(
        listVersion,
        (await this.#emit(tombstone, 'delete', 'relist')).completion,
      );
      return true;
    };
    let published = 0;
    for await (const page of listPages(
      this.deps.client,
      this.#scope,
      this.options.listPageSize,
      signal,
    )) {
      listVersion = page.resourceVersion;
      this.#lastActivity = Date.now();
      for (const object of page.items) {
        const { uid, resourceVersion, name, namespace = '' } = object.metadata;
        seen.add(uid);
        const earlier = knownUidOf.get(`${namespace}/${name}`);
        if (earlier !== undefined && earlier !== uid && (await publishTombstone(earlier)))
          published++;
        const before = known.get(uid);
        if (before?.resourceVersion === resourceVersion) continue;
        const op = before === undefined ? 'add' : 'update';
        this.#progress.track(listVersion, (await this.#emit(object, op, 'relist')).completion);
        published++;
      }
    }
    for (const [uid] of [...known.entries()]) {
      if (seen.has(uid)) continue;
      if (await publishTombstone(uid)) published++;
    }
    this.#progress.mark(listVersion);
    log.info({ resourceVersion: listVersion, objects: seen.size, published }, 'relisted');
    return listVersion;
  }

  /** One watch request; returns the last resourceVersion seen when the server ends it. */
  async #watch(from: string, signal: AbortSignal): Promise<string> {
    let resourceVersion = from;
    const timeoutSeconds = Math.round((this.options.watchTimeoutMs * (1 + Math.random())) / 1_000);
    const events = watchEvents(this.deps.client, this.#scope, {
      resourceVersion,
      inactivityMs: this.options.inactivityMs,
      timeoutSeconds,
      signal,
    });
    for await (const event of events) {
      this.#lastActivity = Date.now();
      this.deps.metrics.watchEvents.inc({ resource: this.#label, type: event.type });
      switch (event.type) {
        case 'BOOKMARK':
          resourceVersion = event.resourceVersion;
          this.#progress.mark(resourceVersion);
          break;
        case 'ADDED':
        case 'MODIFIED':
        case 'DELETED': {
          resourceVersion = event.object.metadata.resourceVersion;
          const op =
            event.type === 'ADDED' ? 'add' : event.type === 'MODIFIED' ? 'update' : 'delete';
          this.#progress.track(
            resourceVersion,
            (await this.#emit(event.object, op, 'watch')).completion,
          );
          break;
        }
        case 'INVALID':
          this.deps.log.error(
            { reason: event.reason, raw: event.raw.slice(0, 200) },
            'unreadable watch event skipped',
          );
          break;
      }
    }
    return resourceVersion;
  }

  /** Publishes a change and updates the known state; returns the publish's completion. */
  async #emit(
    object: KubeObject,
    op: 'add' | 'update' | 'delete',
    reason: 'watch' | 'relist',
  ): Promise<Submitted> {
    const submitted = await this.deps.changes.publish(this.resource, object, op, reason);
    if (op === 'delete') this.deps.known.forget(object.metadata.uid);
    else this.deps.known.remember(object);
    this.deps.metrics.knownObjects.set({ resource: this.#label }, this.deps.known.size);
    return submitted;
  }

  #inScope(namespace: string): boolean {
    return this.options.namespace === '' || this.options.namespace === namespace;
  }

  async #flushCursor(): Promise<void> {
    const committed = this.#progress.committed;
    if (committed === undefined || committed === '' || committed === this.#persisted) return;
    try {
      await this.deps.cursors.write(this.deps.cursorKey, committed);
      this.#persisted = committed;
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not persist the watch cursor; will retry');
    }
  }
}

/** Read through a call: the loop's condition narrows `signal.aborted` to false. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
