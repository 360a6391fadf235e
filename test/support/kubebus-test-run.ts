// `kubebus test` as a user runs it, from the repository root: its exit
// status, stdout and stderr, and the JSON report it printed (-o json).
import assert from 'node:assert/strict';
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

/**
 * A failure's replay line run as printed (`kubebus test … --replay <schedule>`):
 * exit 1 with only that schedule tried; answers the report for a person.
 */
export async function replayed(replay: string, timeoutMs: number): Promise<string> {
  const again = await kubebus(replay.split(' ').slice(1), timeoutMs);
  assert.equal(again.code, 1, again.stderr.slice(-2000));
  assert.equal(
    again.stdout.match(/^ {2}(passed|failed|unreached|not-applicable) /gm)?.length,
    1,
    'only that schedule',
  );
  return again.stdout;
}
