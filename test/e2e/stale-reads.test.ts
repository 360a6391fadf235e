// The stale perturbation of `kubebus test`, on real servers: the bus' record
// of an owned object taken back to an older revision before a step. An
// operator that reads its own journal back by label (ctx.list, which reads
// the bus as it stands) loses an entry, and the printed replay line
// reproduces exactly that failure; its twin that reads the journal by name
// (ctx.get, kept at least as new as its own last write by
// read-your-own-writes, ADR 0019) passes every stale schedule. Without
// read-your-own-writes that twin fails too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  everySchedulePassed,
  failureOf,
  kubebus,
  passingRun,
  replayed,
} from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/journaled.ts';
const BUGGY = 'test/support/operators/journaled-by-list.ts';
const SCHEDULE = 'stale:s1:ConfigMap/sample-journal';
// a wrong journal never converges: 20 s is plenty to call it on the bed (the passing
// runs keep the default, which a slow machine's restarts need and a quick one never waits)
const REACH = ['--reach-within', '20s'];

const RUN_MS = 420_000;
const SUITE_MS = 3 * RUN_MS + 60_000;

describe('kubebus test: stale reads', { timeout: SUITE_MS }, () => {
  it(
    'passes the operator that reads its own write back by name, under every stale schedule',
    { timeout: RUN_MS + 30_000 },
    async () => {
      const report = await passingRun(
        ['test', CORRECT, '--perturb', 'stale', '-o', 'json'],
        RUN_MS,
      );
      // one per step whose predecessor changed the journal and keeps the object: s1, s2, s3
      assert.deepEqual(
        report.schedules.map((s) => s.schedule),
        [SCHEDULE, 'stale:s2:ConfigMap/sample-journal', 'stale:s3:ConfigMap/sample-journal'],
      );
      everySchedulePassed(report, /taken back [1-9]\d* revisions?/);
    },
  );

  it(
    'fails the operator that finds its journal by label, with a replay line that reproduces it',
    { timeout: 2 * RUN_MS + 30_000 },
    async () => {
      const first = await kubebus(
        ['test', BUGGY, '--perturb', 'stale', ...REACH, '-o', 'json'],
        RUN_MS,
      );
      const failure = failureOf(first, {
        schedule: SCHEDULE,
        oracle: 'converges',
        replay: `kubebus test ${BUGGY} --reach-within 20000ms --replay ${SCHEDULE}`,
      });
      assert.ok(
        failure.detail?.some((line) => line.startsWith('ConfigMap/sample-journal')),
        JSON.stringify(failure.detail),
      );

      // the replay line as printed: the same failure, in the report for a person
      const again = await replayed(failure, RUN_MS);
      assert.match(again, /^ {2}the perturbation: the bus' ConfigMap\/sample-journal taken back/m);
      assert.match(again, /^ {4}ConfigMap\/sample-journal/m);
    },
  );
});
