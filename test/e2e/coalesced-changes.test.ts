// Changes an operator does not see one at a time, under `kubebus test`, on
// real servers. An Ensemble that removes only the member just past its new
// size passes while it sees every scale-down; two scale-downs applied while
// it is stopped (3 → 2 → 1 seen as 3 → 1) leave a member's identity behind.
// A Login that learns its old user as an update event carries it (the user
// its process saw last) passes while one process sees every change; stopped
// while the user went back and changed again, it leaves the Secret of the
// first change behind. `unobserved:s2-s3` names both, each printed replay
// line reproduces its failure, and each twin, deciding on what exists,
// passes the same schedules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureOf, kubebus, passingRun, replayed, reportOf } from '../support/kubebus-test-run.js';

const OPERATORS = 'test/support/operators';
// both bugs need the middle of two changes hidden: the step back to spec 0, then spec 2
const SCHEDULE = 'unobserved:s2-s3';
// what is left behind never converges: 20 s is plenty to call it on the bed (the
// passing runs keep the default, which a slow machine's restarts need)
const REACH = ['--reach-within', '20s'];
const RUN_MS = 300_000;

const cases = [
  {
    what: 'the ensemble that removes only the member past its new size (3 → 1 seen as one step)',
    twin: 'the ensemble that removes every member past its size',
    correct: `${OPERATORS}/ensemble.ts`,
    buggy: `${OPERATORS}/ensemble-shrunk-by-one.ts`,
    samples: `${OPERATORS}/ensemble-samples.yaml`,
    left: 'Secret/zk-member-2',
    // the twin, seeing 3 → 1, removes both members in one reconcile
    removed: ['delete Secret zk-member-1', 'delete Secret zk-member-2'],
  },
  {
    what: 'the login that removes the user its process saw last (none, after a restart)',
    twin: "the login that removes every other user's Secret it finds",
    correct: `${OPERATORS}/login.ts`,
    buggy: `${OPERATORS}/login-remembered.ts`,
    samples: `${OPERATORS}/login-samples.yaml`,
    left: 'Secret/shop-reports',
    // the twin, seeing reports → audit, removes the Secret of the first change
    removed: ['delete Secret shop-reports'],
  },
] as const;

describe('kubebus test: two changes seen as one', { timeout: 6 * RUN_MS }, () => {
  for (const bed of cases) {
    it(
      `fails ${bed.what}, with a replay line that reproduces it`,
      { timeout: 2 * RUN_MS },
      async () => {
        const first = await kubebus(
          [
            'test',
            bed.buggy,
            '--samples',
            bed.samples,
            '--perturb',
            'unobserved',
            ...REACH,
            '-o',
            'json',
          ],
          RUN_MS,
        );
        const failure = failureOf(first, {
          schedule: SCHEDULE,
          oracle: 'converges',
          replay: `kubebus test ${bed.buggy} --samples ${bed.samples} --reach-within 20000ms --replay ${SCHEDULE}`,
        });
        assert.deepEqual(failure.detail, [
          `${bed.left}: not in the reference (left behind or extra)`,
        ]);
        // the windows before it hide no such pair of changes: the bug passes them
        assert.deepEqual(
          reportOf(first.stdout, first.stderr).schedules.map((s) => `${s.schedule} ${s.outcome}`),
          ['unobserved:s0-s1 passed', 'unobserved:s1-s2 passed', `${SCHEDULE} failed`],
        );

        const again = await replayed(failure, RUN_MS);
        assert.ok(again.includes(`\n    ${bed.left}: not in the reference`), again);
      },
    );

    it(
      `passes ${bed.twin}, the two changes handled in one reconcile`,
      { timeout: RUN_MS },
      async () => {
        const report = await passingRun(
          [
            'test',
            bed.correct,
            '--samples',
            bed.samples,
            '--perturb',
            'unobserved',
            '--budget',
            '3',
            '-o',
            'json',
          ],
          RUN_MS,
        );
        const coalesced = report.schedules.find((s) => s.schedule === SCHEDULE);
        assert.equal(coalesced?.outcome, 'passed', JSON.stringify(report.schedules));
        assert.ok(
          coalesced.reconciles?.some((r) => bed.removed.every((write) => r.wrote.includes(write))),
          JSON.stringify(coalesced.reconciles),
        );
      },
    );
  }
});
