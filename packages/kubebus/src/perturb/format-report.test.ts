import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatReport } from './format-report.js';
import type { PerturbationReport } from './report.js';

const report: PerturbationReport = {
  operator: 'greetings',
  seed: 1,
  budget: 24,
  layout: 'three',
  statusIntentsOnBus: 12,
  workload: { name: 'sample', steps: ['create with spec 0'] },
  reference: { seconds: 40, steps: [] },
  planned: 3,
  pruned: [
    {
      schedule: 'intermediate:s0:k2',
      why: "write 2 is the reconcile's last, and the next reconcile saw the same revision after it",
    },
  ],
  schedules: [{ schedule: 'lagging:s0', outcome: 'passed', seconds: 6 }],
  unreached: 0,
  passed: true,
  seconds: 60,
};

test('the pruned schedules are counted and listed with why, beside those tried', () => {
  const lines = formatReport(report).split('\n');
  assert.match(lines[0] ?? '', /1 of 3 schedules tried \(1 pruned, budget 24, seed 1\)/);
  assert.match(
    lines[1] ?? '',
    /^ {2}pruned +intermediate:s0:k2 +\(write 2 is the reconcile's last, and the next reconcile saw the same revision after it\)$/,
  );
  assert.match(lines[2] ?? '', /^ {2}passed +lagging:s0 +6\.0 s$/);
});

test('an overlap failure names the step it is judged at: the one applied while its reconcile was paused', () => {
  const failure = {
    schedule: 'overlap:s1:k2',
    outcome: 'failed' as const,
    seconds: 60,
    oracle: 'converges' as const,
    detail: ['ConfigMap/harbour-green: not in the reference (left behind or extra)'],
    reconciles: [],
  };
  const text = formatReport({
    ...report,
    workload: {
      name: 'harbour',
      steps: ['create with spec 0', 'change to spec 1', 'change back to spec 0'],
    },
    schedules: [failure],
    failure: { ...failure, replay: 'kubebus test beacon.ts --replay overlap:s1:k2' },
    passed: false,
  });
  assert.match(text, /^ {2}workload step 2: change back to spec 0$/m);
});
