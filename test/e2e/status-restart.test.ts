// The status-restart perturbation of `kubebus test`, on real servers: the
// status writer crashes holding the step's status intent (nothing written,
// nothing acked), stays down while the reconciler runs on, and a new writer is
// handed the intent. An operator that decides on the status it reads passes
// every such schedule. So does its twin that trusts its memory of the status
// it returned (it counts a status behind that memory a second later as a
// reset): before read-your-own-writes covered the status it failed
// `status-restart:s0`, a bug no other kind of schedule found; now the
// reconcile sees the status this process last intended.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { everySchedulePassed, passingRun } from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/banner.ts';
const TRUSTS_MEMORY = 'test/support/operators/banner-memory.ts';
const SCHEDULE = 'status-restart:s0';

const RUN_MS = 300_000;
const SUITE_MS = 2 * RUN_MS + 60_000;

describe(
  'kubebus test: the status writer restarted between intent and write',
  { timeout: SUITE_MS },
  () => {
    it(
      'passes the operator that decides on the status it reads, under every status-restart schedule',
      { timeout: RUN_MS + 30_000 },
      async () => {
        const report = await passingRun(
          ['test', CORRECT, '--perturb', 'status-restart', '-o', 'json'],
          RUN_MS,
        );
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
        everySchedulePassed(report, /status writer crashed holding/);
      },
    );

    it(
      'passes the twin that trusts its memory too: the requeue sees the status it returned',
      { timeout: RUN_MS + 30_000 },
      async () => {
        // it counts a status behind what it returned a second ago as a reset; with the writer
        // down, the bus and the apiserver are that far behind, but read-your-own-writes shows
        // the reconcile this process' own pending intent (ADR 0019)
        const report = await passingRun(
          ['test', TRUSTS_MEMORY, '--perturb', 'status-restart', '-o', 'json'],
          RUN_MS,
        );
        assert.ok(report.schedules.length >= 5, JSON.stringify(report.schedules));
        everySchedulePassed(report, /status writer crashed holding/);
        for (const schedule of report.schedules) {
          // the operator's own check came while the writer was down: it ran, and counted nothing
          assert.ok((schedule.reconciles ?? []).length >= 2, JSON.stringify(schedule));
        }
      },
    );
  },
);
