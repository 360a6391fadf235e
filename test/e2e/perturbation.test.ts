// `kubebus test` as a user runs it, on real servers: a correct operator
// passes every schedule (exit 0) with the perturbations really applied; the
// same operator with one seeded bug (its checkpoint written before the work)
// fails the intermediate perturbation with the oracle that names it, and the
// printed replay line reproduces exactly that failure.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubebus, reportOf } from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/checkpointed.ts';
const BUGGY = 'test/support/operators/checkpointed-early.ts';

// Budgets that add up on a loaded 2-core machine: a whole run (bed start,
// reference, 10 schedules) and two that stop at the first schedule, each
// bounded, all three within the suite's timeout with a margin.
const FULL_RUN_MS = 600_000;
const SHORT_RUN_MS = 240_000;
const SUITE_MS = FULL_RUN_MS + 2 * SHORT_RUN_MS + 120_000;

describe('kubebus test: perturbation testing', { timeout: SUITE_MS }, () => {
  it(
    'passes a correct operator, crashing it after every write the reference shows',
    { timeout: FULL_RUN_MS + 30_000 },
    async () => {
      // 10: the fewest that reach unobserved:s4-s5 (the kinds alternate)
      const { code, stdout, stderr } = await kubebus(
        // the stale kind has its own test (stale-reads.test.ts)
        ['test', CORRECT, '--budget', '10', '--perturb', 'intermediate,unobserved', '-o', 'json'],
        FULL_RUN_MS,
      );
      const report = reportOf(stdout, stderr);
      assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
      assert.equal(report.passed, true);
      // the workload: created, changed back and forth, deleted, created again, deleted
      assert.equal(report.workload.steps.length, 7);
      assert.equal(report.reference.steps[0]?.maxWritesPerReconcile, 2, 'page and checkpoint');
      const intermediate = report.schedules.filter((s) => s.schedule.startsWith('intermediate:'));
      const unobserved = report.schedules.filter((s) => s.schedule.startsWith('unobserved:'));
      assert.equal(report.schedules.length, 10, 'the budget');
      assert.ok(
        intermediate.length >= 4 && unobserved.length >= 4,
        JSON.stringify(report.schedules.map((s) => s.schedule)),
      );
      // every crash point the reference shows was hit: none skipped as unreached
      assert.equal(
        report.unreached,
        0,
        JSON.stringify(report.schedules.filter((s) => s.outcome === 'unreached')),
      );
      assert.ok(
        report.schedules.every((s) => s.outcome === 'passed'),
        JSON.stringify(report.schedules),
      );
      // a crash really happened, and the redelivered reconcile did the work again
      const crashed = intermediate.find((s) => s.schedule === 'intermediate:s0:k1');
      const calls = crashed?.reconciles ?? [];
      assert.equal(calls[0]?.outcome, 'crashed', JSON.stringify(calls));
      assert.deepEqual(calls[0]?.wrote, ['apply ConfigMap sample-page']);
      assert.ok(
        calls
          .slice(1)
          .some(
            (call) =>
              call.outcome === 'ok' && call.wrote.includes('apply ConfigMap sample-checkpoint'),
          ),
        JSON.stringify(calls),
      );
      // the delete-and-recreate under the same name, unseen by the stopped operator
      assert.ok(unobserved.some((s) => s.schedule === 'unobserved:s4-s5'));
      // progress went to stderr while stdout stayed one JSON document
      assert.match(stderr, /\[1\/\d+\] intermediate:s0:k1: passed/);
    },
  );

  it(
    'fails a checkpoint written before its work, with the oracle and a replay line that reproduces it',
    { timeout: 2 * SHORT_RUN_MS + 30_000 },
    async () => {
      // a failing schedule waits out --reach-within: 20 s is plenty to call it on the bed
      const first = await kubebus(
        ['test', BUGGY, '--reach-within', '20s', '-o', 'json'],
        SHORT_RUN_MS,
      );
      assert.equal(first.code, 1, `exit ${first.code}; stderr: ${first.stderr.slice(-2000)}`);
      const report = reportOf(first.stdout, first.stderr);
      assert.equal(report.passed, false);
      const failure = report.failure;
      assert.ok(failure !== undefined);
      assert.equal(failure.schedule, 'intermediate:s0:k1');
      assert.equal(failure.oracle, 'converges');
      assert.ok(
        failure.detail?.includes('ConfigMap/sample-page: missing'),
        JSON.stringify(failure.detail),
      );
      // what the operator saw and wrote: the checkpoint, then the stop; then a reconcile that trusted it
      const calls = failure.reconciles ?? [];
      assert.deepEqual(calls[0]?.wrote, ['apply ConfigMap sample-checkpoint']);
      assert.equal(calls[0]?.outcome, 'crashed');
      assert.ok(
        calls.slice(1).every((call) => !call.wrote.includes('apply ConfigMap sample-page')),
      );
      assert.equal(
        failure.replay,
        `kubebus test ${BUGGY} --reach-within 20000ms --replay intermediate:s0:k1`,
      );

      // the replay line, as printed, for a person: the same failure, a report to act on
      const again = await kubebus(failure.replay.split(' ').slice(1), SHORT_RUN_MS);
      assert.equal(again.code, 1, again.stderr.slice(-2000));
      assert.match(again.stdout, /^ {2}failed +intermediate:s0:k1 /m);
      assert.equal(
        again.stdout.match(/^ {2}(passed|failed|unreached|not-applicable) /gm)?.length,
        1,
        'only that schedule',
      );
      assert.match(again.stdout, /^FAIL intermediate:s0:k1: oracle converges$/m);
      assert.match(again.stdout, /^ {4}ConfigMap\/sample-page: missing$/m);
      assert.match(again.stdout, /stopped here by the perturbation/);
      assert.match(
        again.stdout,
        new RegExp(
          `^ {4}kubebus test ${BUGGY} --reach-within 20000ms --replay intermediate:s0:k1$`,
          'm',
        ),
      );
    },
  );
});
