// The kubebus CLI as a user runs it, from the repository's sources: its exit
// status, stdout and stderr, with the environment given on top of this one.
// Asynchronous, so roles running in the test's own process go on meanwhile.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  /** the exit status; null when it was killed (the timeout) */
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function kubebusCli(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 120_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
      {
        cwd: root,
        env: { ...process.env, ...env },
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 << 20,
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        const killed = error?.killed === true ? `\n(killed after ${timeoutMs / 1000} s)` : '';
        resolve({ status, stdout, stderr: `${stderr}${killed}` });
      },
    );
  });
}
