// The overlap perturbation of `kubebus test`, on real servers: the step's
// first reconcile pauses after its k-th write, the next step is applied and
// reaches the bus, then the reconcile is released to finish on the spec it
// saw. Its status is stale by then and never written (the status writer
// drops an older generation's). beacon-remembered.ts deletes the colour its
// status says it showed last: it stays right only because the runtime shows
// the next reconcile the status its own pending intent makes (ADR 0019) —
// with that overlay turned off, `--replay overlap:s1:k2` fails `converges`
// with ConfigMap/harbour-green left behind (docs/testing.md, "What it
// finds"). beacon.ts prunes by what the Beacon owns.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { passingRun } from '../support/kubebus-test-run.js';

const SAMPLES = 'test/support/operators/beacon-samples.yaml';
const RUN_MS = 300_000;

describe(
  'kubebus test: the next change while a reconcile runs',
  { timeout: 3 * RUN_MS + 60_000 },
  () => {
    it('shows the next reconcile the status the paused one returned, though it was never written', async () => {
      const report = await passingRun(
        [
          'test',
          'test/support/operators/beacon-remembered.ts',
          '--samples',
          SAMPLES,
          '--replay',
          'overlap:s1:k2',
          '-o',
          'json',
        ],
        RUN_MS,
      );
      // red → green deletes red and puts up green: two writes, paused after the second
      assert.deepEqual(report.reference.steps[1]?.reconciles[0]?.wrote, [
        'delete ConfigMap harbour-red',
        'apply ConfigMap harbour-green',
      ]);
      const [schedule] = report.schedules;
      assert.equal(schedule?.outcome, 'passed', JSON.stringify(report.schedules));
      assert.match(
        schedule.note ?? '',
        /^paused after write 2 while step 2 \(change back to spec 0\) was applied, then wrote nothing more, and returned$/,
      );
      // the paused reconcile (generation 2) first, then the next step's: one of those saw the
      // revert (generation 3), was shown green (the paused one's status) and took it down
      const [paused, ...next] = schedule.reconciles ?? [];
      assert.match(paused?.saw ?? '', /^generation 2,/, JSON.stringify(schedule.reconciles));
      assert.ok(
        next.some(
          (r) =>
            r.saw.startsWith('generation 3,') && r.wrote.includes('delete ConfigMap harbour-green'),
        ),
        JSON.stringify(schedule.reconciles),
      );
    });

    it('keeps that when the status is written in the reconciler’s process, as kubebus run does', async () => {
      const report = await passingRun(
        [
          'test',
          'test/support/operators/beacon-remembered.ts',
          '--samples',
          SAMPLES,
          '--layout',
          'one',
          '--replay',
          'overlap:s1:k2',
          '-o',
          'json',
        ],
        RUN_MS,
      );
      assert.equal(report.layout, 'one');
      // every status went from the reconcile to the writer in its process: none through the bus
      assert.equal(report.statusIntentsOnBus, 0);
      const [schedule] = report.schedules;
      assert.equal(schedule?.outcome, 'passed', JSON.stringify(report.schedules));
      assert.ok(
        schedule.reconciles?.some(
          (r) =>
            r.saw.startsWith('generation 3,') && r.wrote.includes('delete ConfigMap harbour-green'),
        ) === true,
        JSON.stringify(schedule.reconciles),
      );
    });

    it('passes the pruning twin, paused after each step’s write while the next change lands', async () => {
      const report = await passingRun(
        [
          'test',
          'test/support/operators/beacon.ts',
          '--samples',
          SAMPLES,
          '--perturb',
          'overlap',
          '--budget',
          '2',
          '-o',
          'json',
        ],
        RUN_MS,
      );
      assert.deepEqual(
        report.schedules.map((s) => [s.schedule, s.outcome]),
        [
          ['overlap:s0:k1', 'passed'],
          ['overlap:s1:k1', 'passed'],
        ],
      );
      for (const schedule of report.schedules)
        assert.match(
          schedule.note ?? '',
          /^paused after write 1 while step \d \(.*\) was applied, then wrote nothing more, and returned$/,
        );
    });
  },
);
