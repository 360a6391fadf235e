// The variables the command line reads (bus commands, replay, version): the
// roles' own NATS and kubeconfig variables (CommonEnv), so one shell works for
// `kubebus run` and `kubebus status` alike. docs/configuration.md lists them.
import { CommonEnv, type Environment } from '@kubebus/shared/config';
import { z } from 'zod';
import { usageError } from './commands.js';

export const CliEnvSchema = z.object({
  // optional here: --server or a nats context may name the server instead
  KUBEBUS_NATS_URL: CommonEnv.KUBEBUS_NATS_URL.optional(),
  KUBEBUS_NATS_USER: CommonEnv.KUBEBUS_NATS_USER,
  KUBEBUS_NATS_PASSWORD: CommonEnv.KUBEBUS_NATS_PASSWORD,
  KUBEBUS_NATS_PASSWORD_FILE: CommonEnv.KUBEBUS_NATS_PASSWORD_FILE,
  KUBEBUS_NATS_CA: CommonEnv.KUBEBUS_NATS_CA,
  KUBEBUS_NATS_CERT: CommonEnv.KUBEBUS_NATS_CERT,
  KUBEBUS_NATS_KEY: CommonEnv.KUBEBUS_NATS_KEY,
  KUBECONFIG: CommonEnv.KUBECONFIG,
  /** the replayed operator's log, on stderr; silent keeps replay's output to its diffs */
  KUBEBUS_LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'silent'])
    .default('silent'),
  /** where nats contexts are: $XDG_CONFIG_HOME/nats */
  XDG_CONFIG_HOME: z.string().optional(),
});
export type CliEnv = z.output<typeof CliEnvSchema>;

/** The environment parsed, or a usage error naming each bad variable on one line. */
export function cliEnv(env: Environment): CliEnv {
  const parsed = CliEnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '(environment)');
    const value = env[name];
    return `${name}: ${issue.message} (${value === undefined ? 'not set' : `got ${JSON.stringify(value)}`})`;
  });
  return usageError(`${problems.join(', ')}; fix or unset it (docs/configuration.md)`);
}
