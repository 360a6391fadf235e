// `kubebus test` as a user runs it, from the repository root: its exit
// status, stdout and stderr, and the JSON report it printed (-o json).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PerturbationReport } from 'kubebus/testing';

const root = fileURLToPath(new URL('../..', import.meta.url));

export function kubebus(
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
      { cwd: root, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        const killed = error?.killed === true ? `\n(killed after ${timeoutMs / 1000} s)` : '';
        resolve({ code, stdout, stderr: `${stderr}${killed}` });
      },
    );
  });
}

export function reportOf(stdout: string, stderr: string): PerturbationReport {
  try {
    return JSON.parse(stdout) as PerturbationReport;
  } catch {
    throw new Error(`kubebus test printed no JSON report; stderr: ${stderr.slice(-2000)}`);
  }
}
