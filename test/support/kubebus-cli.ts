// The kubebus CLI as a user runs it, from the repository's sources: its exit
// status, stdout and stderr, with the environment given on top of this one.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export function kubebusCli(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 120_000,
): SpawnSyncReturns<string> {
  return spawnSync(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
    { cwd: root, encoding: 'utf8', env: { ...process.env, ...env }, timeout: timeoutMs },
  );
}
