// `kubebus test` as a user runs it, from the repository root: its exit
// status, stdout and stderr, and the JSON report it printed (-o json).
import assert from 'node:assert/strict';
import type { OracleName, PerturbationReport } from 'kubebus/testing';
import { kubebusCli } from './kubebus-cli.js';

/** `kubebus <args>` (kubebus-cli.ts), its status as a number: -1 when it was killed. */
export async function kubebus(
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { status, stdout, stderr } = await kubebusCli(args, {}, timeoutMs);
  return { code: status ?? -1, stdout, stderr };
}

export function reportOf(stdout: string, stderr: string): PerturbationReport {
  try {
    return JSON.parse(stdout) as PerturbationReport;
  } catch {
    throw new Error(`kubebus test printed no JSON report; stderr: ${stderr.slice(-2000)}`);
  }
}

/** `kubebus test <args> -o json` that passed: exit 0 and a passing report (answered, for more checks). */
export async function passingRun(
  args: readonly string[],
  timeoutMs: number,
): Promise<PerturbationReport> {
  const { code, stdout, stderr } = await kubebus(args, timeoutMs);
  const report = reportOf(stdout, stderr);
  assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
  assert.equal(report.passed, true);
  return report;
}

/** Every schedule of the report passed, its note (what the perturbation did) matching `note`. */
export function everySchedulePassed(report: PerturbationReport, note?: RegExp): void {
  for (const schedule of report.schedules) {
    assert.equal(schedule.outcome, 'passed', JSON.stringify(schedule));
    if (note !== undefined) assert.match(schedule.note ?? '', note, JSON.stringify(schedule));
  }
}

/**
 * A run that failed: exit 1, its first failure `schedule` breaking `oracle`,
 * with the replay line `kubebus test <operator> <options> --replay <schedule>`.
 */
export function failureOf(
  run: { readonly code: number; readonly stdout: string; readonly stderr: string },
  expected: { readonly schedule: string; readonly oracle: OracleName; readonly replay: string },
): NonNullable<PerturbationReport['failure']> {
  assert.equal(run.code, 1, `exit ${run.code}; stderr: ${run.stderr.slice(-2000)}`);
  const report = reportOf(run.stdout, run.stderr);
  const failure = report.failure;
  assert.ok(failure !== undefined, JSON.stringify(report.schedules));
  assert.equal(failure.schedule, expected.schedule);
  assert.equal(failure.oracle, expected.oracle);
  assert.equal(failure.replay, expected.replay);
  return failure;
}

/**
 * A failure's replay line run as printed: it fails that schedule alone, with
 * the same oracle, in the report for a person (answered, for more checks).
 */
export async function replayed(
  failure: { readonly replay: string; readonly schedule: string; readonly oracle?: string },
  timeoutMs: number,
): Promise<string> {
  const again = await kubebus(failure.replay.split(' ').slice(1), timeoutMs);
  assert.equal(again.code, 1, again.stderr.slice(-2000));
  assert.equal(
    again.stdout.match(/^ {2}(passed|failed|unreached|not-applicable) /gm)?.length,
    1,
    'only that schedule',
  );
  assert.match(
    again.stdout,
    new RegExp(`^FAIL ${failure.schedule}: oracle ${failure.oracle ?? 'converges'}$`, 'm'),
  );
  return again.stdout;
}
