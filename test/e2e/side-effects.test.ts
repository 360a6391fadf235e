// Declared external calls (ctx.once) under `kubebus test`, on real servers:
// an Invoice charged through a payment service outside Kubernetes. The
// operator that charges before writing its receipt, and trusts the receipt
// alone, charges twice when it crashes between the two: `side-effects-once`
// names the call, and the printed replay line reproduces it. Its twin, whose
// declared call asks the payment service first (`done`), charges once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubebus, passingRun, replayed, reportOf } from '../support/kubebus-test-run.js';

const CORRECT = 'test/support/operators/charged.ts';
const BUGGY = 'test/support/operators/charged-early.ts';
const SCHEDULE = 'intermediate:s0:k1';

const RUN_MS = 420_000;

describe('kubebus test: declared external calls', { timeout: 3 * RUN_MS + 60_000 }, () => {
  it(
    'passes the operator that asks the receiver before calling again, crashed after each write',
    { timeout: RUN_MS + 30_000 },
    async () => {
      const report = await passingRun(
        ['test', CORRECT, '--perturb', 'intermediate', '--budget', '4', '-o', 'json'],
        RUN_MS,
      );
      const crashed = report.schedules.find((s) => s.schedule === SCHEDULE);
      const calls = crashed?.reconciles ?? [];
      // stopped right after the charge; the redelivered reconcile found it done and wrote the receipt
      assert.deepEqual(calls[0]?.wrote, ['once charge'], JSON.stringify(calls));
      assert.equal(calls[0]?.outcome, 'crashed');
      assert.ok(
        calls.slice(1).every((call) => !call.wrote.includes('once charge')),
        JSON.stringify(calls),
      );
    },
  );

  it(
    'fails the operator that trusts its receipt alone, naming the call made twice',
    { timeout: 2 * RUN_MS + 30_000 },
    async () => {
      const first = await kubebus(
        ['test', BUGGY, '--perturb', 'intermediate', '-o', 'json'],
        RUN_MS,
      );
      assert.equal(first.code, 1, `exit ${first.code}; stderr: ${first.stderr.slice(-2000)}`);
      const failure = reportOf(first.stdout, first.stderr).failure;
      assert.ok(failure !== undefined);
      assert.equal(failure.schedule, SCHEDULE);
      assert.equal(failure.oracle, 'side-effects-once');
      assert.deepEqual(failure.detail, ['Effect charge: 1 in the reference, 2 here']);
      assert.equal(failure.replay, `kubebus test ${BUGGY} --replay ${SCHEDULE}`);

      const again = { stdout: await replayed(failure, RUN_MS) };
      assert.match(again.stdout, new RegExp(`^FAIL ${SCHEDULE}: oracle side-effects-once$`, 'm'));
      assert.match(again.stdout, /^ {4}Effect charge: 1 in the reference, 2 here$/m);
    },
  );
});
