// The report for a person: one line per schedule tried, then the first
// failure — the oracle it broke, what differed, what the operator saw and
// wrote — and the line that re-runs just it.
import type { PerturbationReport, ReconcileSummary } from './report.js';
import { parseSchedule } from './schedule.js';

/** The step a schedule is judged at: an intermediate or stale schedule's own, an unobserved one's last, an overlap's next. */
function judgedStep(schedule: string): number | undefined {
  const parsed = parseSchedule(schedule);
  if ('error' in parsed) return undefined;
  if (parsed.kind === 'unobserved') return parsed.to;
  return parsed.kind === 'overlap' ? parsed.step + 1 : parsed.step;
}

const OUTCOMES: Record<Exclude<ReconcileSummary['outcome'], 'ok'>, string> = {
  running: 'running',
  error: 'error',
  crashed: 'stopped here by the perturbation',
  'handed-over': 'paused here while its partition was handed over, then released (a zombie)',
};

function reconcileLines(reconciles: readonly ReconcileSummary[]): string[] {
  return reconciles.map(
    (r, index) =>
      `    ${index + 1}. ${r.call} (attempt ${r.attempt}) saw ${r.saw}; wrote ${r.wrote.length === 0 ? 'nothing' : r.wrote.join(', ')}${r.outcome === 'ok' ? '' : ` — ${OUTCOMES[r.outcome]}`}`,
  );
}

export function formatReport(report: PerturbationReport): string {
  const lines: string[] = [];
  lines.push(
    `operator ${report.operator}${report.layout === 'one' ? ' (the reconciler and status writer in one process)' : ''}: reference ${report.reference.seconds.toFixed(1)} s over ${report.workload.steps.length} steps, ` +
      `${report.schedules.length} of ${report.planned} schedules tried (${report.pruned.length} pruned, budget ${report.budget}, seed ${report.seed}), ${report.seconds.toFixed(1)} s in all`,
  );
  for (const pruned of report.pruned)
    lines.push(`  ${'pruned'.padEnd(14)} ${pruned.schedule.padEnd(26)}          (${pruned.why})`);
  for (const result of report.schedules)
    lines.push(
      `  ${result.outcome.padEnd(14)} ${result.schedule.padEnd(26)} ${result.seconds.toFixed(1).padStart(5)} s${result.note === undefined ? '' : `  (${result.note})`}`,
    );
  const failure = report.failure;
  if (failure === undefined && !report.passed) {
    lines.push(
      `FAIL: all ${report.unreached} intermediate schedules came back unreached: no reconcile made the writes the reference shows, so no crash was applied; run again, and if it repeats, the operator's writes depend on more than its spec`,
    );
    return `${lines.join('\n')}\n`;
  }
  if (failure === undefined) {
    lines.push(
      report.schedules.length === 0
        ? 'PASS: no schedule to try (the reference made no writes and has one step)'
        : `PASS: every schedule converged to the reference's state and stayed there${report.unreached === 0 ? '' : ` (${report.unreached} unreached: their reconcile made fewer writes this time)`}`,
    );
    return `${lines.join('\n')}\n`;
  }
  const step = judgedStep(failure.schedule);
  lines.push(
    '',
    `FAIL ${failure.schedule}: oracle ${failure.oracle ?? 'converges'}`,
    ...(step === undefined
      ? []
      : [`  workload step ${step}: ${report.workload.steps[step] ?? ''}`]),
    ...(failure.note === undefined ? [] : [`  the perturbation: ${failure.note}`]),
    '  what differed from the reference:',
    ...(failure.detail ?? []).map((line) => `    ${line}`),
    '  what the operator saw and wrote (this step):',
    ...reconcileLines(failure.reconciles ?? []),
    '  re-run just this schedule:',
    `    ${failure.replay}`,
  );
  return `${lines.join('\n')}\n`;
}
