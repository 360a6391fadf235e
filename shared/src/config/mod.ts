// Configuration: one zod schema per service over its environment variables,
// parsed once at start, frozen, and passed down. Library code never reads
// process.env; main.ts does, and hands it here.
import type { z } from 'zod';
import { ErrorCodes, KubebusError } from '../errors/mod.js';

export type Environment = Readonly<Record<string, string | undefined>>;

/** Parses `env` with `schema`; a bad value fails with every offending variable named. */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Environment,
): Readonly<z.output<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const variable = issue.path.join('.') || '(environment)';
      const value = typeof issue.path[0] === 'string' ? env[issue.path[0]] : undefined;
      const shown = value === undefined ? 'not set' : `got ${JSON.stringify(value)}`;
      return `  ${variable}: ${issue.message} (${shown})`;
    });
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `invalid configuration:\n${problems.join('\n')}`,
    );
  }
  return deepFreeze(parsed.data);
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export { durationMs, parseDuration } from './duration.js';
export { CommonEnv, commonConfig, positiveInt } from './common.js';
export { watchNamespacesEnv } from './watch-namespaces.js';
export {
  DEFAULT_STATUS_PARTITIONS,
  statusPartitionsEnv,
  workerConfig,
  workerEnv,
} from './worker.js';
export type { WorkerDefaults } from './worker.js';
export {
  KNOWN_VARIABLES,
  configOrExit,
  kubeConfigOrExit,
  orExit,
  unknownVariables,
} from './startup.js';
