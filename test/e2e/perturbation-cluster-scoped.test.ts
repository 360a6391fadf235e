// `kubebus test` on a cluster-scoped operator, as a user runs it on real
// servers: each schedule's Team has a name of its own, its children are found
// in the Namespace it made (through their controller reference), a correct
// operator passes with the crashes really applied, and the same operator with
// its checkpoint written before its page fails with the child that is missing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubebus, passingRun, reportOf } from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/teams.ts';
const BUGGY = 'test/support/operators/teams-checkpoint-early.ts';

// Bounded on a loaded 2-core machine: a bed start, the reference (7 steps, each
// a Namespace made or removed by the garbage collector) and a few schedules.
const RUN_MS = 480_000;

describe('kubebus test: a cluster-scoped primary', { timeout: 2 * RUN_MS + 60_000 }, () => {
  it(
    'passes a correct operator: crashes after each write, changes it never sees',
    { timeout: RUN_MS + 30_000 },
    async () => {
      const report = await passingRun(
        ['test', CORRECT, '--budget', '6', '--perturb', 'intermediate,unobserved', '-o', 'json'],
        RUN_MS,
      );
      // namespace, page, checkpoint
      assert.equal(report.reference.steps[0]?.maxWritesPerReconcile, 3);
      assert.equal(report.schedules.length, 6, JSON.stringify(report.schedules));
      assert.equal(report.unreached, 0, JSON.stringify(report.schedules));
      assert.ok(
        report.schedules.every((s) => s.outcome === 'passed'),
        JSON.stringify(report.schedules),
      );
      // the crash after the Namespace really happened, and the next reconcile wrote the rest
      const crashed = report.schedules.find((s) => s.schedule === 'intermediate:s0:k1');
      const calls = crashed?.reconciles ?? [];
      assert.equal(calls[0]?.outcome, 'crashed', JSON.stringify(calls));
      assert.deepEqual(calls[0]?.wrote, ['apply Namespace team-sample-kbt-0']);
      assert.ok(
        calls.slice(1).some((c) => c.outcome === 'ok' && c.wrote.includes('apply ConfigMap quota')),
        JSON.stringify(calls),
      );
    },
  );

  it(
    'fails a checkpoint written before the page, naming the child in the Team’s namespace',
    { timeout: RUN_MS + 30_000 },
    async () => {
      const { code, stdout, stderr } = await kubebus(
        // a failing schedule waits out --reach-within: 20 s is plenty to call it on the bed
        ['test', BUGGY, '--reach-within', '20s', '--replay', 'intermediate:s0:k2', '-o', 'json'],
        RUN_MS,
      );
      assert.equal(code, 1, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
      const report = reportOf(stdout, stderr);
      const failure = report.failure;
      assert.ok(failure !== undefined, JSON.stringify(report.schedules));
      assert.equal(failure.schedule, 'intermediate:s0:k2');
      assert.equal(failure.oracle, 'converges');
      assert.ok(
        failure.detail?.includes('ConfigMap/team-<name>/quota: missing'),
        JSON.stringify(failure.detail),
      );
      assert.deepEqual(failure.reconciles?.[0]?.wrote, [
        'apply Namespace team-sample-kbt-0',
        'apply ConfigMap checkpoint',
      ]);
    },
  );
});
