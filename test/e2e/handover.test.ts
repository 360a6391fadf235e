// The handover perturbation of `kubebus test`, on real servers: the step's
// reconcile pauses after its k-th write, its work partition is handed to a
// second instance of the operator, which reconciles the object, and then the
// paused reconcile is released (a zombie). The operator announces its
// credentials Secret with an Event from whichever reconcile finds it
// unannounced (the DatabaseCluster example's pattern): the second instance
// announces it, and the zombie — which created the Secret before its pause —
// would announce it again, unless the runtime fences it. Before the fence
// covered ctx.event, handover:s0:k1 failed side-effects-once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { passingRun } from '../support/kubebus-test-run.js';

const OPERATOR = 'test/support/operators/vaults.ts';
const RUN_MS = 420_000;

describe(
  'kubebus test: a partition handed over mid-reconcile',
  { timeout: RUN_MS + 60_000 },
  () => {
    it(
      'hands the partition over after each write of the first step; the zombie is fenced',
      { timeout: RUN_MS + 30_000 },
      async () => {
        const report = await passingRun(
          ['test', OPERATOR, '--perturb', 'handover', '--budget', '4', '-o', 'json'],
          RUN_MS,
        );
        // created: createOnce the Secret, announce it (Event and mark, sent together), the page
        assert.equal(report.reference.steps[0]?.maxWritesPerReconcile, 4);
        assert.deepEqual(
          report.schedules.map((s) => s.schedule),
          ['handover:s0:k1', 'handover:s0:k2', 'handover:s0:k3', 'handover:s0:k4'],
        );
        const first = report.schedules[0];
        assert.equal(first?.outcome, 'passed', JSON.stringify(first));
        // the second instance reconciled while the first was paused, and the zombie was stopped
        assert.match(
          first.note ?? '',
          /the second instance reached the reference's state meanwhile/,
        );
        assert.match(first.note ?? '', /the zombie was fenced, wrote nothing more/);
        // the second instance's reconcile is recorded beside the paused one
        assert.ok(
          first.reconciles?.some((r) => r.outcome === 'handed-over') === true &&
            first.reconciles.some(
              (r) =>
                r.outcome === 'ok' &&
                r.wrote.some((w) => w.startsWith('event Normal CredentialsCreated')),
            ),
          JSON.stringify(first.reconciles),
        );
        assert.ok(
          report.schedules.every((s) => s.outcome === 'passed' || s.outcome === 'unreached'),
          JSON.stringify(report.schedules),
        );
      },
    );
  },
);
