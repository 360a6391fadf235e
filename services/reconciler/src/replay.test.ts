// Which status a revision's own reconcile came to, from the outcomes on the
// bus: the comparison `kubebus replay` makes must never be against a status
// some other reconcile wrote.
import type { OutcomeRecord, Revision } from '@kubebus/shared/bus';
import { KubeApiError } from '@kubebus/shared/kube';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  comparableStatus,
  compared,
  unreconciledWhy,
  existedUnrecorded,
  failedWhereRecordedCame,
  failsWhereRecordedStopped,
  failureOfTheCode,
  stoppedAndNow,
  formatReplay,
  recordedOutcome,
  replayDiverged,
  removedFields,
  writtenFields,
} from './replay.js';

const TRACE_A = '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-1111111111111111-01';
const TRACE_B = '00-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-2222222222222222-01';

function revision(seq: number, rv: string, time: string, status?: object): Revision {
  return {
    seq,
    event: {
      id: `uid/${rv}/update`,
      kbrv: rv,
      time,
      data: {
        apiVersion: 'v1',
        kind: 'Thing',
        metadata: { name: 'x', uid: 'uid', resourceVersion: rv },
        ...(status === undefined ? {} : { status }),
      },
    },
  } as unknown as Revision;
}

function outcome(
  controller: string,
  at: string,
  traceparent: string,
  extra: Partial<OutcomeRecord> = {},
): OutcomeRecord {
  return {
    controller,
    result: 'success',
    ms: 10,
    attempt: 1,
    reconcileId: 'r',
    traceparent,
    at,
    ...extra,
  };
}

describe('replay: the status a revision came to', () => {
  const created = revision(1, '10', '2026-12-01T10:00:00.000Z');
  const written = revision(2, '11', '2026-12-01T10:00:01.000Z', { phase: 'Ready' });
  const later = revision(3, '12', '2026-12-01T10:00:05.000Z', { phase: 'Ready', extra: 1 });
  const revisions = [created, written, later];

  it('is what the status writer wrote in the same trace, not the next revision', () => {
    const outcomes = [
      outcome('op', '2026-12-01T10:00:00.500Z', TRACE_A, { eventId: created.event.id }),
      outcome('op.status-writer', '2026-12-01T10:00:01.000Z', TRACE_A, { wrote: '11' }),
    ];
    const recorded = recordedOutcome(created, revisions, outcomes, 'op');
    assert.deepEqual(recorded?.status, { phase: 'Ready' });
    assert.equal(recorded?.started.toISOString(), '2026-12-01T10:00:00.490Z');
  });

  it("is never another operator's status writer's, and still the shared one's of the layout before", () => {
    const reconciled = outcome('op', '2026-12-01T10:00:00.500Z', TRACE_A, {
      eventId: created.event.id,
    });
    const byOther = outcome('other.status-writer', '2026-12-01T10:00:01.000Z', TRACE_A, {
      wrote: '12',
    });
    const bySharedBefore = { ...byOther, controller: 'status-writer' };
    // another operator's write of revision 12 is not this reconcile's: as if there were none
    const ignored = recordedOutcome(created, revisions, [reconciled, byOther], 'op')?.status;
    assert.notDeepEqual(ignored, { phase: 'Ready', extra: 1 });
    assert.deepEqual(ignored, recordedOutcome(created, revisions, [reconciled], 'op')?.status);
    assert.deepEqual(
      recordedOutcome(created, revisions, [reconciled, bySharedBefore], 'op')?.status,
      { phase: 'Ready', extra: 1 },
    );
  });

  it('is the status in place when the writer skipped a no-op', () => {
    const outcomes = [
      outcome('op', '2026-12-01T10:00:06.000Z', TRACE_B, { eventId: later.event.id }),
      outcome('op.status-writer', '2026-12-01T10:00:06.100Z', TRACE_B, { result: 'skipped' }),
    ];
    assert.deepEqual(recordedOutcome(later, revisions, outcomes, 'op')?.status, {
      phase: 'Ready',
      extra: 1,
    });
  });

  it('is nothing for a revision never reconciled on its own, or reconciled by another controller', () => {
    const outcomes = [
      outcome('other', '2026-12-01T10:00:00.500Z', TRACE_A, { eventId: created.event.id }),
      outcome('op', '2026-12-01T10:00:00.600Z', TRACE_A, {
        eventId: created.event.id,
        result: 'error',
      }),
    ];
    assert.equal(recordedOutcome(created, revisions, outcomes, 'op'), undefined);
    assert.equal(recordedOutcome(written, revisions, [], 'op'), undefined);
  });
});

describe('what a replayed write would change: the fields it sends, as they were', () => {
  const then = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'default', uid: 'u', labels: { app: 'x' } },
    spec: { resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' },
  };
  // today's object with the write applied: a later delete marked it, the size the write sends is new
  const answer = {
    ...then,
    metadata: {
      ...then.metadata,
      resourceVersion: '99',
      deletionTimestamp: '2026-12-05T16:49:24Z',
      deletionGracePeriodSeconds: 0,
    },
    spec: { ...then.spec, resources: { requests: { storage: '2Gi' } } },
  };
  const body = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'default', labels: { app: 'x' } },
    spec: { resources: { requests: { storage: '2Gi' } } },
  };

  it('leaves out what others changed since, and keeps what the write sends', () => {
    assert.deepEqual(
      writtenFields(then as never, answer, body).map(({ path }) => path),
      ['spec.resources.requests.storage'],
    );
    // the apply body as sent on the wire (JSON text) reads the same
    assert.deepEqual(
      writtenFields(then as never, answer, JSON.stringify(body)).map(({ path }) => path),
      ['spec.resources.requests.storage'],
    );
  });

  it('compares everything when the body is unknown', () => {
    assert.ok(
      writtenFields(then as never, answer)
        .map(({ path }) => path)
        .includes('metadata.deletionTimestamp'),
    );
  });

  it('shows what server-side apply removes: what it set before and no longer sends', () => {
    // today: a label the operator applied before, and one another manager set (kept)
    const live = {
      ...then,
      metadata: { ...then.metadata, labels: { app: 'x', tier: 'db', owner: 'ops' } },
    };
    // the write stops sending `tier`: the dry run's answer has it no more
    const applied = { ...live, metadata: { ...live.metadata, labels: { app: 'x', owner: 'ops' } } };
    assert.deepEqual(removedFields(live, applied), [
      { path: 'metadata.labels.tier', before: 'db', after: undefined },
    ]);
    // nothing to compare with when the object did not exist
    assert.deepEqual(removedFields(undefined, applied), []);
    // a label added after the replayed revision was not there for its write to remove
    const thenWithoutTier = { ...then, metadata: { ...then.metadata, labels: { app: 'x' } } };
    assert.deepEqual(removedFields(live, applied, thenWithoutTier), []);
    const thenWithTier = {
      ...then,
      metadata: { ...then.metadata, labels: { app: 'x', tier: 'db' } },
    };
    assert.deepEqual(
      removedFields(live, applied, thenWithTier).map(({ path }) => path),
      ['metadata.labels.tier'],
    );
    // and nothing when the write removes nothing (a change is not a removal)
    assert.deepEqual(removedFields(then, answer), []);
  });

  it('never shows a Secret’s values, in what a write sends or removes', () => {
    const secret = (data: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'default', labels: { app: 'x' } },
      data,
    });
    const live = secret({ password: 'c2VjcmV0', old: 'b2xk' });
    const applied = { ...secret({ password: 'bmV3' }), metadata: { ...live.metadata, labels: {} } };
    const shown = JSON.stringify([
      ...writtenFields(secret({}) as never, applied, secret({ password: 'bmV3' })),
      ...removedFields(live, applied),
    ]);
    assert.ok(!/c2VjcmV0|b2xk|bmV3/.test(shown), shown);
    // what is not a value still shows: the label the write no longer sends
    assert.match(shown, /metadata\.labels\.app/);
  });
});

describe('replay: the status compared', () => {
  it('compares that a time the operator wrote is there, not when', () => {
    const recorded = {
      lastRegistered: '2026-12-07T10:00:00Z',
      runs: [{ at: '2026-12-07T10:00:00.123+01:00', ok: true }],
      note: 'since 2026-12-07',
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-07T10:00:00Z' }],
    };
    const replayed = {
      lastRegistered: '2026-12-07T14:31:07Z',
      runs: [{ at: '2026-12-07T14:31:07.456+01:00', ok: true }],
      note: 'since 2026-12-07',
      observedGeneration: 4,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-07T14:31:07Z' }],
    };
    assert.deepEqual(comparableStatus(recorded), comparableStatus(replayed));
    // a time that went missing, or text that is not a time, still differs
    assert.notDeepEqual(
      comparableStatus(recorded),
      comparableStatus({ ...replayed, lastRegistered: 'never' }),
    );
    assert.notDeepEqual(
      comparableStatus(recorded),
      comparableStatus({ ...replayed, note: 'since 2026-12-08' }),
    );
  });
});

describe('replay: which differences count', () => {
  const differs = [{ path: 'fingerprint', before: 'aaaa', after: 'bbbb' }];

  it('counts a difference when every Secret read is as it was then', () => {
    assert.deepEqual(compared(undefined, [], differs), { differences: differs });
  });

  it('shows, not counts, one computed from a Secret changed since', () => {
    const step = compared(undefined, ['Secret app/db (changed since)'], differs);
    assert.deepEqual(step.differences, []);
    assert.match(step.uncompared ?? '', /Secret app\/db \(changed since\) as they are today/);
    assert.match(step.uncompared ?? '', /status\.fingerprint$/);
    // no difference, nothing to explain
    assert.deepEqual(compared(undefined, ['Secret app/db (changed since)'], []), {
      differences: [],
    });
  });

  it('compares nothing for a revision not reconciled on its own, or whose reconciles all failed', () => {
    const revision = { seq: 7, event: { id: 'e7' } } as unknown as Parameters<
      typeof unreconciledWhy
    >[0];
    const why = (outcomes: unknown[]) =>
      unreconciledWhy(revision, outcomes as Parameters<typeof unreconciledWhy>[1], 'tenants');
    assert.match(compared(why([]), [], differs).uncompared ?? '', /coalesced/);
    const failed = why([
      {
        controller: 'tenants',
        eventId: 'e7',
        result: 'error',
        error: 'billing POST /tenants: 503\n  at x',
      },
      { controller: 'other', eventId: 'e7', result: 'success' },
    ]);
    assert.equal(
      failed,
      'its reconciles came to no status (the last: error, billing POST /tenants: 503): nothing to compare',
    );
    assert.deepEqual(compared(failed, [], differs).differences, []);
  });
});

describe('replay: a revision that fails', () => {
  it('counts where its own reconcile came to a status, and only there', () => {
    assert.equal(failedWhereRecordedCame(true, undefined, 'field is immutable', []), true);
    // never reconciled on its own: nothing recorded to fall short of
    assert.equal(failedWhereRecordedCame(false, undefined, 'field is immutable', []), false);
    // a status computed before it threw is compared as any other
    assert.equal(failedWhereRecordedCame(true, { phase: 'x' }, 'late failure', []), false);
    // a Secret read as it is today may be what fails it
    assert.equal(failedWhereRecordedCame(true, undefined, 'gone', ['secrets shop/db']), false);
  });

  it('counts a failure of the code, not of a server or of the replaying user', () => {
    const answered = (status: number) =>
      new KubeApiError(status, '', `apiserver answered ${String(status)}`);
    assert.equal(failureOfTheCode(answered(422)), true);
    assert.equal(failureOfTheCode(new Error('a regression')), true);
    for (const status of [401, 403, 429, 503])
      assert.equal(failureOfTheCode(answered(status)), false, String(status));
  });

  it('makes the replay diverge, as a different status does', () => {
    const step = {
      seq: 3,
      op: 'update',
      resourceVersion: '9',
      generation: 2,
      computed: undefined,
      recorded: { url: 'u' },
      differences: [],
      writes: [],
      error: 'apiserver answered 422 Invalid: roleRef is immutable',
    };
    assert.equal(replayDiverged([step]), false);
    assert.equal(replayDiverged([{ ...step, failed: true }]), true);
    assert.match(
      formatReplay([{ ...step, failed: true }]),
      /^#3 update rv 9 generation 2: no status computed \(apiserver answered 422 Invalid: roleRef is immutable\); its recorded reconcile came to a status: failed$/m,
    );
  });
});

describe('replay: a write to an object the bus did not record then', () => {
  const namespace = (created: string) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-beta', uid: 'n1', creationTimestamp: created },
  });

  it('is judged against the object as it is today when it existed before the revision', () => {
    const live = namespace('2026-12-05T10:00:00Z');
    assert.equal(existedUnrecorded(live, '2026-12-05T10:00:05.120Z'), live);
  });

  it('is a create when the object was made with the revision or after (second-resolution stamps)', () => {
    assert.equal(
      existedUnrecorded(namespace('2026-12-05T10:00:05Z'), '2026-12-05T10:00:05.900Z'),
      undefined,
    );
    assert.equal(existedUnrecorded(undefined, '2026-12-05T10:00:05Z'), undefined);
  });

  it('never carries a Secret’s values', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', uid: 's1', creationTimestamp: '2026-12-05T09:00:00Z' },
      data: { password: 'c2VjcmV0' },
    };
    const judged = existedUnrecorded(secret, '2026-12-05T10:00:00Z') as Record<string, unknown>;
    assert.equal(JSON.stringify(judged).includes('c2VjcmV0'), false);
  });
});

describe('a revision the recorded run stopped at (parked after a dead letter, a TerminalError)', () => {
  const parked = 'parked after a dead letter';
  it('fails when the code still throws there before any status, and only then', () => {
    assert.equal(failsWhereRecordedStopped(parked, undefined, 'cannot read cpu', []), true);
    assert.equal(failsWhereRecordedStopped(parked, { cpu: '1000m' }, undefined, []), false);
    assert.equal(failsWhereRecordedStopped(undefined, undefined, 'cannot read cpu', []), false);
    // a Secret read may have changed since: not the code's failure for sure
    assert.equal(
      failsWhereRecordedStopped(parked, undefined, 'boom', ['Secret a/b (changed since)']),
      false,
    );
  });

  it('says whether the code comes to the status in place then, or another (not counted)', () => {
    const degraded = {
      conditions: [{ type: 'Ready', status: 'False', reason: 'RetryBudgetSpent', message: 'x' }],
    };
    const ready = { cpu: '1000m', conditions: [{ type: 'Ready', status: 'True', reason: 'Ok' }] };
    assert.equal(
      stoppedAndNow(parked, degraded, degraded),
      'parked after a dead letter when recorded; the code comes to the status in place then again',
    );
    assert.equal(
      stoppedAndNow(parked, degraded, ready),
      'parked after a dead letter when recorded; the code now comes to another status (Ready True, Ok): not counted',
    );
  });

  it('prints a failure there as still failing, and makes the replay diverge', () => {
    const step = {
      seq: 2,
      op: 'update',
      resourceVersion: '7',
      generation: 1,
      computed: undefined,
      recorded: undefined,
      differences: [],
      writes: [],
      error: 'cannot read cpu "lots"',
      failed: true as const,
      recordedStop: parked,
    };
    assert.equal(
      formatReplay([step]),
      '#2 update rv 7 generation 1: no status computed (cannot read cpu "lots"); parked after a dead letter when recorded, and still fails\n',
    );
    assert.equal(replayDiverged([step]), true);
  });
});
