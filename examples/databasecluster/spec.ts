// The DatabaseCluster spec: one zod schema gives the TypeScript types, the
// reconciler's validation (with the rules OpenAPI cannot express) and the CRD's
// openAPIV3Schema (see crd.ts).
import { z } from 'zod';

export const GROUP = 'example.kubebus.dev';
export const VERSION = 'v1alpha1';
export const KIND = 'DatabaseCluster';
export const PLURAL = 'databaseclusters';

const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

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
      .describe('Engine version'),
    replicas: z.int().min(1).max(9).default(3).describe('Database instances (1-9)'),
    storage: z
      .object({
        size: z
          .string()
          .regex(QUANTITY, 'a Kubernetes quantity such as 10Gi')
          .describe('Volume size per instance'),
      })
      .describe('Storage of each instance'),
    backup: z
      .object({
        schedule: z.string().min(1).describe('Backup schedule, a 5-field cron expression'),
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

const CRON_FIELDS = [
  ['minute', 0, 59],
  ['hour', 0, 23],
  ['day of month', 1, 31],
  ['month', 1, 12],
  ['day of week', 0, 7],
] as const;

/** Why `expression` is not a valid 5-field cron expression, or undefined. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return `expected 5 cron fields, got ${fields.length}`;
  for (const [index, [name, min, max]] of CRON_FIELDS.entries()) {
    const field = fields[index] ?? '';
    for (const part of field.split(',')) {
      const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
      if (match === null) return `cron ${name} "${field}" is not valid`;
      for (const value of [match[2], match[3]]) {
        if (value !== undefined && (Number(value) < min || Number(value) > max)) {
          return `cron ${name} ${value} is outside ${min}-${max}`;
        }
      }
      if (match[4] !== undefined && Number(match[4]) === 0) return `cron ${name} step 0`;
    }
  }
  return undefined;
}

/** A readable one-line summary of what is wrong with a spec. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `spec.${issue.path.join('.')}: ${issue.message}`).join('; ');
}
