// The DatabaseCluster spec: one zod schema gives the TypeScript types, the
// reconciler's validation (with the rules OpenAPI cannot express) and the CRD's
// openAPIV3Schema (see crd.ts).
import { Cron } from 'croner';
import { z } from 'zod';

export const GROUP = 'example.kubebus.dev';
export const VERSION = 'v1alpha1';
export const KIND = 'DatabaseCluster';
export const PLURAL = 'databaseclusters';

const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/**
 * Refused at admission: a size change. The StatefulSet's volumeClaimTemplates are
 * immutable, so the operator could never apply it and the cluster would end
 * Degraded; the apiserver says so at once instead. Growing the volumes is a
 * resize of each PVC, which needs a StorageClass that allows expansion (and can
 * never shrink): the user's call, outside this spec. Quantities compare by value,
 * so 1Gi to 1024Mi is no change.
 */
const STORAGE_FIXED = {
  rule: 'quantity(self.size).compareTo(quantity(oldSelf.size)) == 0',
  message:
    "storage.size cannot change once the cluster exists (a StatefulSet's volumeClaimTemplates are immutable): resize the PersistentVolumeClaims data-<cluster>-<n> where the StorageClass allows expansion, or create a new cluster",
  reason: 'FieldValueForbidden',
} as const;

/** Major versions each engine supports (a cross-field rule the CRD schema cannot carry). */
export const SUPPORTED_VERSIONS = {
  postgres: ['13', '14', '15', '16', '17'],
  mysql: ['8.0', '8.4', '9'],
} as const;

export const DatabaseClusterSpecSchema = z
  .object({
    engine: z.enum(['postgres', 'mysql']).describe('Database engine'),
    version: z
      .string()
      .regex(/^[0-9]+(\.[0-9]+){0,2}$/, 'a version such as 16 or 8.0.36')
      // every string is bounded at admission: the reconciler reads the spec at every round
      .max(32)
      .describe('Engine version'),
    replicas: z.int().min(1).max(9).default(3).describe('Database instances (1-9)'),
    storage: z
      .object({
        size: z
          .string()
          .regex(QUANTITY, 'a Kubernetes quantity such as 10Gi')
          // bounds the cost of the CEL rule below (the apiserver estimates it from maxLength)
          .max(64)
          .describe('Volume size per instance'),
      })
      .describe('Storage of each instance')
      .meta({ 'x-kubernetes-validations': [STORAGE_FIXED] }),
    backup: z
      .object({
        schedule: z
          .string()
          .min(1)
          // a tenant's megabyte of schedule cost the reconciler a second of parsing per round
          .max(128)
          .describe(
            'Backup schedule as Kubernetes CronJob reads it: 5 cron fields or @daily, @every 6h, …',
          ),
        retentionDays: z.int().min(1).max(365).default(7).describe('Days backups are kept'),
      })
      .optional()
      .describe('Scheduled backups to the cluster’s object-store bucket'),
  })
  .superRefine((spec, ctx) => {
    const supported: readonly string[] = SUPPORTED_VERSIONS[spec.engine];
    if (
      !supported.some((major) => spec.version === major || spec.version.startsWith(`${major}.`))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['version'],
        message: `${spec.engine} ${spec.version} is not supported (supported: ${supported.join(', ')})`,
      });
    }
    if (spec.backup !== undefined) {
      const problem = cronProblem(spec.backup.schedule);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['backup', 'schedule'], message: problem });
      }
    }
  });

export type DatabaseClusterSpec = z.output<typeof DatabaseClusterSpecSchema>;

/** Descriptors Kubernetes CronJob accepts besides five fields (robfig/cron's standard parser). */
const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);
/** @every with a Go duration, e.g. @every 1h30m */
const EVERY = /^@every (\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

/**
 * Why `expression` is not a schedule Kubernetes CronJob accepts, or
 * undefined. croner parses; what it accepts beyond Kubernetes (a seconds
 * field, L, W, #) is refused first.
 */
export function cronProblem(expression: string): string | undefined {
  const trimmed = expression.trim();
  if (/^(CRON_)?TZ=/.test(trimmed))
    return 'a time zone in the schedule is not supported by Kubernetes: set it apart';
  if (trimmed.startsWith('@'))
    return DESCRIPTORS.has(trimmed.toLowerCase()) || EVERY.test(trimmed)
      ? undefined
      : `unknown descriptor ${trimmed} (use @yearly, @monthly, @weekly, @daily, @hourly or @every <duration>)`;
  const fields = trimmed.split(/\s+/);
  if (fields.length !== 5) return `expected 5 cron fields, got ${fields.length}`;
  // month and weekday names (JAN, MON) are fine; last-day (L), weekday (W) and nth (#) are not
  const unsupported = /[LW#]/i.exec(fields.join(' ').replace(/\b[a-z]{3}\b/gi, ''));
  if (unsupported !== null)
    return `"${unsupported[0]}" is not supported by Kubernetes CronJob schedules`;
  try {
    new Cron(trimmed, { paused: true });
    return undefined;
  } catch (error) {
    return `cron: ${(error as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** A readable one-line summary of what is wrong with a spec. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `spec.${issue.path.join('.')}: ${issue.message}`).join('; ');
}
