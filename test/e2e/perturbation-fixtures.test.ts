// `kubebus test` with fixtures: the Secrets a Connection names
// (connections.ts) are documents of another kind in the samples file, made in
// every run's namespace before the first step. Without them every reconcile
// would fail (the Secret not found) and the reference would never be Ready.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubebus, reportOf } from '../support/kubebus-test-run.js';

const OPERATOR = 'test/support/operators/connections.ts';
const SAMPLES = 'test/support/operators/connections-samples.yaml';
const RUN_MS = 300_000;

describe('kubebus test: fixtures', { timeout: RUN_MS + 60_000 }, () => {
  it('makes the samples’ Secrets first in every run, for the reference and a schedule', async () => {
    const { code, stdout, stderr } = await kubebus(
      [
        'test',
        OPERATOR,
        '--samples',
        SAMPLES,
        '--budget',
        '1',
        '--perturb',
        'unobserved',
        '-o',
        'json',
      ],
      RUN_MS,
    );
    const report = reportOf(stdout, stderr);
    assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
    assert.equal(report.workload.name, 'orders');
    const reconciles = report.reference.steps.flatMap((step) => step.reconciles);
    const reads = reconciles.flatMap((r) => r.read);
    for (const secret of ['db-password', 'db-password-2', 'db-password-3'])
      assert.ok(reads.includes(`readSecret ${secret}`), JSON.stringify(reads));
    // each found its Secret: no reconcile failed
    assert.ok(
      reconciles.length > 0 && reconciles.every((r) => r.outcome === 'ok'),
      JSON.stringify(reconciles),
    );
    assert.equal(report.schedules.length, 1);
    assert.equal(report.schedules[0]?.outcome, 'passed', JSON.stringify(report.schedules));
  });
});
