// The watcher's configuration: its settings from environment variables,
// parsed once by zod, and what the operator definition decides, from the host.
import {
  CommonEnv,
  commonConfig,
  durationMs,
  positiveInt,
  watchNamespacesEnv,
} from '@kubebus/shared/config';
import type { KubeObject } from '@kubebus/shared/events';
import { z } from 'zod';

/** What the watcher tells apart: a controller, its primary resource and what it owns. */
export interface ControllerSpec {
  /** the controller's name: its work subjects and consumers carry it */
  readonly name: string;
  /** the primary resource, as "resource.version.group" */
  readonly for: string;
  readonly owns: readonly string[];
  readonly watches?: readonly WatchMapping[];
}

/** A reference to an object by name; namespace default: the object's that names it. */
export interface NamedRef {
  readonly name: string;
  readonly namespace?: string;
}

/**
 * A watched resource whose changes reconcile primaries: those `map` names from
 * the changed object, or those whose `references` name it (an index the
 * watcher keeps, reference-index.ts).
 */
export type WatchMapping =
  | { readonly resource: string; map(object: KubeObject): readonly NamedRef[] }
  | { readonly resource: string; references(primary: KubeObject): readonly NamedRef[] };

/**
 * The watcher's settings from the environment. What the operator definition
 * decides — its controllers and their work partitions — is not among them:
 * the host derives it and passes it typed (WatcherConfig).
 */
export const WatcherConfigSchema = z
  .object({
    ...CommonEnv,
    /** comma-separated namespaces to watch; empty: all */
    KUBEBUS_WATCH_NAMESPACES: watchNamespacesEnv(),
    KUBEBUS_WATCH_LABEL_SELECTOR: z.string().optional(),
    KUBEBUS_RESYNC_PERIOD: durationMs('10h'),
    KUBEBUS_WATCH_INACTIVITY: durationMs('150s'),
    KUBEBUS_WATCH_TIMEOUT: durationMs('5m'),
    KUBEBUS_LIST_PAGE_SIZE: positiveInt(500),
    KUBEBUS_PUBLISH_MAX_IN_FLIGHT: positiveInt(256),
    KUBEBUS_BACKOFF_BASE: durationMs('200ms'),
    KUBEBUS_BACKOFF_CAP: durationMs('30s'),
    KUBEBUS_CURSOR_FLUSH: durationMs('1s'),
    KUBEBUS_WATCHER_ID: z.string().default('watcher'),
  })
  .transform((env) => ({
    ...commonConfig(env),
    namespaces: env.KUBEBUS_WATCH_NAMESPACES,
    labelSelector: env.KUBEBUS_WATCH_LABEL_SELECTOR,
    resyncPeriodMs: env.KUBEBUS_RESYNC_PERIOD,
    inactivityMs: env.KUBEBUS_WATCH_INACTIVITY,
    watchTimeoutMs: env.KUBEBUS_WATCH_TIMEOUT,
    listPageSize: env.KUBEBUS_LIST_PAGE_SIZE,
    maxInFlight: env.KUBEBUS_PUBLISH_MAX_IN_FLIGHT,
    backoff: { baseMs: env.KUBEBUS_BACKOFF_BASE, capMs: env.KUBEBUS_BACKOFF_CAP },
    cursorFlushMs: env.KUBEBUS_CURSOR_FLUSH,
    watcherId: env.KUBEBUS_WATCHER_ID,
  }));

export type WatcherSettings = z.output<typeof WatcherConfigSchema>;

export interface WatcherConfig extends WatcherSettings {
  /** the operator it watches for: its dead letters and cursors carry the name (ADR 0015) */
  readonly operator: string;
  readonly controllers: readonly ControllerSpec[];
  /** the work partitions the controllers' reconcilers consume */
  readonly partitions: number;
}
