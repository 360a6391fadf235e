// The watcher's configuration: environment variables, parsed once by zod.
import { CommonEnv, commonConfig, durationMs, positiveInt } from '@kubebus/shared/config';
import type { KubeObject } from '@kubebus/shared/events';
import { z } from 'zod';

/** "resource.version.group" (kubectl's notation; core kinds are "resource.version"). */
const resourceName = z
  .string()
  .regex(
    /^[a-z0-9-]+\.v[0-9a-z]+(\.[a-z0-9.-]+)?$/,
    'expected resource.version.group, e.g. statefulsets.v1.apps',
  );

export const ControllerSpecSchema = z.object({
  /** the controller's name: its work subjects and consumers carry it */
  name: z.string().regex(/^[a-z0-9-]+$/, 'lower-case letters, digits and dashes'),
  for: resourceName,
  owns: z.array(resourceName).default([]),
});
/** A watched resource whose changes reconcile the primary objects `map` names (hosts only: code, not JSON). */
export interface WatchMapping {
  readonly resource: string;
  map(object: KubeObject): readonly { readonly name: string; readonly namespace?: string }[];
}

export type ControllerSpec = z.infer<typeof ControllerSpecSchema> & {
  readonly watches?: readonly WatchMapping[];
};

const json = <T extends z.ZodType>(schema: T) =>
  z.string().transform((text, ctx): z.output<T> => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected JSON' });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: 'custom', message: `${issue.path.join('.')}: ${issue.message}` });
      }
      return z.NEVER;
    }
    return parsed.data;
  });

/** As parsed from JSON (no watches: mappings are code, given by a host). */
const controllerSpecs = (parsed: readonly ControllerSpec[]): readonly ControllerSpec[] => parsed;

export const WatcherConfigSchema = z
  .object({
    ...CommonEnv,
    KUBEBUS_CONTROLLERS: json(z.array(ControllerSpecSchema).min(1)),
    /** comma-separated namespaces to watch; empty: all */
    KUBEBUS_WATCH_NAMESPACES: z
      .string()
      .default('')
      .transform((list) =>
        list
          .split(',')
          .map((ns) => ns.trim())
          .filter((ns) => ns !== ''),
      )
      .pipe(
        z.array(
          z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'namespace names are DNS labels'),
        ),
      ),
    KUBEBUS_WATCH_LABEL_SELECTOR: z.string().optional(),
    KUBEBUS_WORK_PARTITIONS: positiveInt(16),
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
    controllers: controllerSpecs(env.KUBEBUS_CONTROLLERS),
    namespaces: env.KUBEBUS_WATCH_NAMESPACES,
    labelSelector: env.KUBEBUS_WATCH_LABEL_SELECTOR,
    partitions: env.KUBEBUS_WORK_PARTITIONS,
    resyncPeriodMs: env.KUBEBUS_RESYNC_PERIOD,
    inactivityMs: env.KUBEBUS_WATCH_INACTIVITY,
    watchTimeoutMs: env.KUBEBUS_WATCH_TIMEOUT,
    listPageSize: env.KUBEBUS_LIST_PAGE_SIZE,
    maxInFlight: env.KUBEBUS_PUBLISH_MAX_IN_FLIGHT,
    backoff: { baseMs: env.KUBEBUS_BACKOFF_BASE, capMs: env.KUBEBUS_BACKOFF_CAP },
    cursorFlushMs: env.KUBEBUS_CURSOR_FLUSH,
    watcherId: env.KUBEBUS_WATCHER_ID,
  }));

export type WatcherConfig = z.output<typeof WatcherConfigSchema>;
