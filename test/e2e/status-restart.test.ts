// The status-restart perturbation of `kubebus test`, on real servers: the
// status writer crashes holding the step's status intent (nothing written,
// nothing acked), stays down while the reconciler runs on, and a new writer is
// handed the intent. An operator that decides on the status it reads passes
// every such schedule; its twin that trusts its memory of the status it
// returned counts a reset that never happened — a bug no other kind of
// schedule finds — and the printed replay line reproduces exactly that failure.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureOf, kubebus, replayed, reportOf } from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/banner.ts';
const BUGGY = 'test/support/operators/banner-memory.ts';
const SCHEDULE = 'status-restart:s0';
// a wrong status never converges: 20 s is plenty to call it on the bed (the passing
// runs keep the default, which a slow machine's restarts need and a quick one never waits)
const REACH = ['--reach-within', '20s'];

const RUN_MS = 300_000;
const SUITE_MS = 4 * RUN_MS + 60_000;

describe(
  'kubebus test: the status writer restarted between intent and write',
  { timeout: SUITE_MS },
  () => {
    it(
      'passes the operator that decides on the status it reads, under every status-restart schedule',
      { timeout: RUN_MS + 30_000 },
      async () => {
        const { code, stdout, stderr } = await kubebus(
          ['test', CORRECT, '--perturb', 'status-restart', '-o', 'json'],
          RUN_MS,
        );
        const report = reportOf(stdout, stderr);
        assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
        assert.equal(report.passed, true);
        // one per step that keeps the object: created, changed, back, changed again, re-created
        assert.deepEqual(
          report.schedules.map((s) => s.schedule),
          [
            SCHEDULE,
            'status-restart:s1',
            'status-restart:s2',
            'status-restart:s3',
            'status-restart:s5',
          ],
        );
        assert.ok(
          report.schedules.every(
            (s) => s.outcome === 'passed' && /status writer crashed holding/.test(s.note ?? ''),
          ),
          JSON.stringify(report.schedules),
        );
      },
    );

    it(
      'finds nothing wrong with the twin that trusts its memory under every other kind of schedule',
      { timeout: RUN_MS + 30_000 },
      async () => {
        const { code, stdout, stderr } = await kubebus(
          ['test', BUGGY, '--perturb', 'intermediate,unobserved,stale', '-o', 'json'],
          RUN_MS,
        );
        const report = reportOf(stdout, stderr);
        assert.equal(code, 0, `exit ${code}; stderr: ${stderr.slice(-2000)}`);
        // it writes nothing of its own and owns nothing: only unobserved windows apply
        assert.ok(report.schedules.length > 0);
        assert.ok(
          report.schedules.every(
            (s) => s.outcome === 'passed' && s.schedule.startsWith('unobserved:'),
          ),
          JSON.stringify(report.schedules),
        );
      },
    );

    it(
      'fails the twin that trusts its memory, with a replay line that reproduces it',
      { timeout: 2 * RUN_MS + 30_000 },
      async () => {
        const first = await kubebus(['test', BUGGY, ...REACH, '-o', 'json'], RUN_MS);
        const failure = failureOf(first, {
          schedule: SCHEDULE,
          oracle: 'converges',
          replay: `kubebus test ${BUGGY} --reach-within 20000ms --replay ${SCHEDULE}`,
        });
        assert.ok(
          failure.detail?.some((line) => line.includes('resets')),
          JSON.stringify(failure.detail),
        );

        // the replay line as printed: the same failure, in the report for a person
        const again = await replayed(failure, RUN_MS);
        assert.match(again, /^ {2}the perturbation: the status writer crashed holding/m);
      },
    );
  },
);
