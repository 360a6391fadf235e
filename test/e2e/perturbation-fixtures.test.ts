// `kubebus test` with fixtures: the Secrets a Connection names
// (connections.ts) are documents of another kind in the samples file, made in
// every run's namespace before the first step. Without them every reconcile
// would fail (the Secret not found) and the reference would never be Ready.
// A second document of one is a revision: a workload step of its own, which
// the operator must be told of (its watch) and which schedules perturb.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubebus, reportOf } from '../support/kubebus-test-run.js';

const OPERATOR = 'test/support/operators/connections.ts';
const UNWATCHED = 'test/support/operators/connections-unwatched.ts';
const ROTATED = 'test/support/operators/connections-rotated-samples.yaml';
/** the workload's step that applies db-password-3's second document */
const ROTATION = 4;
const RUN_MS = 300_000;

describe('kubebus test: fixtures', { timeout: 2 * RUN_MS + 60_000 }, () => {
  it("changes a fixture given twice as a step of its own, and perturbs that step's reconcile", async () => {
    const { code, stdout, stderr } = await kubebus(
      [
        'test',
        OPERATOR,
        '--samples',
        ROTATED,
        '--replay',
        `status-restart:s${ROTATION}`,
        '-o',
        'json',
      ],
      RUN_MS,
    );
    const report = reportOf(stdout, stderr);
    assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
    assert.equal(report.workload.name, 'orders');
    // the Secrets were made first in every run: each spec's reconcile found its own
    const reconciles = report.reference.steps.flatMap((step) => step.reconciles);
    const reads = reconciles.flatMap((r) => r.read);
    for (const secret of ['db-password', 'db-password-2', 'db-password-3'])
      assert.ok(reads.includes(`readSecret ${secret}`), JSON.stringify(reads));
    assert.ok(
      reconciles.length > 0 && reconciles.every((r) => r.outcome === 'ok'),
      JSON.stringify(reconciles),
    );
    // each role apart (the default): every status intent travelled through the bus
    assert.equal(report.layout, 'three');
    assert.ok(report.statusIntentsOnBus > 0, String(report.statusIntentsOnBus));
    assert.equal(
      report.workload.steps[ROTATION],
      'change Secret/db-password-3 to its revision 2',
      JSON.stringify(report.workload.steps),
    );
    assert.equal(report.workload.steps[ROTATION + 1], 'delete');
    // the watch brought the new password: a reconcile in the step itself read it
    const rotated = report.reference.steps[ROTATION]?.reconciles ?? [];
    assert.ok(
      rotated.some((r) => r.read.includes('readSecret db-password-3') && r.outcome === 'ok'),
      JSON.stringify(rotated),
    );
    // the status writer crashed holding the intent of the rotation's reconcile, and the run still
    // reached the reference's status (the new fingerprint)
    const [schedule] = report.schedules;
    assert.equal(schedule?.outcome, 'passed', JSON.stringify(report.schedules));
    assert.match(schedule.note ?? '', /crashed holding the step's first intent/);
  });

  it('refuses an operator that reads a fixture it does not watch, once that fixture changes', async () => {
    const { code, stdout, stderr } = await kubebus(
      ['test', UNWATCHED, '--samples', ROTATED, '--budget', '1'],
      RUN_MS,
    );
    assert.equal(code, 1, `exit ${code}; stdout: ${stdout.slice(-1000)}`);
    const lines = stderr.trim().split('\n');
    assert.match(
      lines.at(-1) ?? '',
      /reads Secret\/db-password-3 but does not watch Secrets.*add Secrets to its watches/,
      stderr.slice(-2000),
    );
    // the revision is a step of the workload: 4 spec steps, the revision, delete, create, delete
    assert.match(stderr, /reference: 8 steps on Connection orders/);
  });
});
