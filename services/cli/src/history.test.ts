import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutcomeRecord, Revision } from '@kubebus/shared/bus';
import { eventId, kubeEvent } from '@kubebus/shared/events';
import { formatHistory, formatOutcomes, placeOutcomes } from './history.js';

const revision = (
  seq: number,
  rv: string,
  time: string,
  op: 'add' | 'update' = 'update',
  uid = 'uid-1',
  version = 'v1alpha1',
): Revision => ({
  seq,
  event: kubeEvent({
    resource: {
      group: 'example.kubebus.dev',
      version,
      resource: 'databaseclusters',
      namespaced: true,
    },
    object: {
      apiVersion: `example.kubebus.dev/${version}`,
      kind: 'DatabaseCluster',
      metadata: { name: 'db', namespace: 'ns', uid, resourceVersion: rv },
      status: { seq },
    },
    op,
    reason: 'watch',
    source: 'https://127.0.0.1:6443',
    time: new Date(time),
  }),
});

const outcome = (
  fields: Partial<OutcomeRecord> & { at: string; trace: string },
): OutcomeRecord => ({
  controller: 'databasecluster',
  result: 'success',
  ms: 5,
  attempt: 1,
  reconcileId: 'r',
  traceparent: `00-${fields.trace}-00f067aa0ba902b7-01`,
  ...fields,
});

const revisions = [
  revision(1, '10', '2026-11-30T10:00:00.000Z', 'add'),
  revision(2, '11', '2026-11-30T10:00:01.000Z'),
];

describe('history: outcomes joined to the revision they belong to', () => {
  it('places a reconcile by its event, a status write by its trace, the rest by time', () => {
    const outcomes = [
      // published after revision 2, but it acted on revision 1's event
      outcome({
        at: '2026-11-30T10:00:02.000Z',
        trace: 'a'.repeat(32),
        eventId: eventId('uid-1', '10', 'add'),
      }),
      // the status write of that reconcile: no event, same trace
      outcome({
        controller: 'kubebus-status-writer',
        at: '2026-11-30T10:00:03.000Z',
        trace: 'a'.repeat(32),
        wrote: '11',
      }),
      // no event, unknown trace: the last revision before it
      outcome({ at: '2026-11-30T10:00:01.500Z', trace: 'b'.repeat(32) }),
      // before anything still kept
      outcome({ at: '2026-11-30T09:00:00.000Z', trace: 'c'.repeat(32) }),
      // a status write recorded before the reconcile that asked for it...
      outcome({
        controller: 'kubebus-status-writer',
        at: '2026-11-30T10:00:01.700Z',
        trace: 'e'.repeat(32),
      }),
      // ...which acted on an owned object's event (not one of these revisions)
      outcome({
        at: '2026-11-30T10:00:00.500Z',
        trace: 'e'.repeat(32),
        eventId: eventId('uid-owned', '7', 'update'),
      }),
    ];
    assert.deepEqual(placeOutcomes(revisions, outcomes), [0, 0, 1, -1, 0, 0]);
  });

  it('says which write produced a revision', () => {
    const text = formatHistory(
      revisions,
      [],
      [
        outcome({
          controller: 'kubebus-status-writer',
          at: '2026-11-30T10:00:00.500Z',
          trace: 'd'.repeat(32),
          wrote: '11',
        }),
      ],
    );
    const lines = text.split('\n');
    const second = lines.findIndex((line) => line.startsWith('#2 '));
    assert.equal(
      lines[second + 1],
      `    written by kubebus-status-writer, trace ${'d'.repeat(32)}`,
    );
    assert.match(text, /kubebus-status-writer success in 5 ms, wrote rv 11 trace d+/);
  });

  it("says a spec change with no new generation is the apiserver's defaults, not the writer's", () => {
    const at = (seq: number, rv: string, spec: object, generation: number): Revision => {
      const { event } = revision(seq, rv, `2026-11-30T10:00:0${String(seq)}.000Z`);
      const data = { ...event.data, metadata: { ...event.data?.metadata, generation }, spec };
      return { seq, event: { ...event, kbgeneration: generation, data } as Revision['event'] };
    };
    const defaulted = formatHistory(
      [at(1, '10', { size: 1 }, 1), at(2, '11', { size: 1, tier: 'standard' }, 1)],
      [],
    );
    assert.match(
      defaulted,
      /spec\.tier: \(none\) → "standard"\n(.*\n)* {4}\(spec changed with no new generation: the apiserver's doing/,
    );
    // a spec edited by someone moves the generation: nothing of the kind said
    const edited = formatHistory([at(1, '10', { size: 1 }, 1), at(2, '11', { size: 2 }, 2)], []);
    assert.doesNotMatch(edited, /no new generation/);
  });

  it('says whose change a reconcile followed when it was another object’s', () => {
    const text = formatHistory(
      revisions,
      [],
      [
        outcome({
          at: '2026-11-30T10:00:00.600Z',
          trace: 'f'.repeat(32),
          eventId: eventId('uid-secret', '8', 'update'),
          cause: 'secrets ns/db-password',
        }),
      ],
    );
    assert.match(
      text,
      /→ databasecluster success after a change of secrets ns\/db-password in 5 ms/,
    );
  });

  it('says where another object of the name begins, and diffs it against nothing earlier', () => {
    const text = formatHistory(
      [...revisions, revision(3, '20', '2026-11-30T11:00:00.000Z', 'add', 'uid-2')],
      [],
    );
    const lines = text.split('\n');
    const third = lines.findIndex((line) => line.startsWith('#3 '));
    assert.equal(lines[third - 1], '— another object of this name from here: uid uid-2');
    // no "status.seq: 2 → 3" as if the new object were a change of the old one
    assert.equal(lines[third + 1], '');
  });

  it('says where the recording version changes, and diffs nothing across it', () => {
    const text = formatHistory(
      [...revisions, revision(3, '12', '2026-11-30T11:00:00.000Z', 'update', 'uid-1', 'v1')],
      [],
    );
    const lines = text.split('\n');
    const third = lines.findIndex((line) => line.startsWith('#3 '));
    assert.equal(
      lines[third + 1],
      '    recorded as example.kubebus.dev/v1 from here (was example.kubebus.dev/v1alpha1): not compared across versions',
    );
    assert.equal(lines[third + 2], '');
  });
});

describe('history: retries of one failure', () => {
  it('are one line per run, with their attempts, times and first and last trace', () => {
    const failing = (
      attempt: number,
      error = 'fetch failed: connect ECONNREFUSED 127.0.0.1:8080',
    ) =>
      outcome({
        result: 'error',
        attempt,
        error,
        ms: 10 + (attempt % 3),
        at: `2026-11-30T10:00:${String(attempt).padStart(2, '0')}.000Z`,
        trace: `4bf92f3577b34da6a3ce929d0e0e47${String(attempt).padStart(2, '0')}`,
      });
    const lines = formatOutcomes([
      ...[28, 29, 30, 31].map((attempt) => failing(attempt)),
      failing(32, 'apiserver answered 500'),
      outcome({ at: '2026-11-30T10:00:40.000Z', trace: '4bf92f3577b34da6a3ce929d0e0e4799' }),
    ]);
    assert.equal(lines.length, 3, lines.join('\n'));
    assert.equal(
      lines[0],
      '    → databasecluster error ×4 (attempts 28–31, 2026-11-30T10:00:28.000Z to 2026-11-30T10:00:31.000Z, 10–12 ms): fetch failed: connect ECONNREFUSED 127.0.0.1:8080 traces 4bf92f3577b34da6a3ce929d0e0e4728 … 4bf92f3577b34da6a3ce929d0e0e4731',
    );
    assert.match(
      lines[1] ?? '',
      /→ databasecluster error in 12 ms \(attempt 32\): apiserver answered 500/,
    );
    assert.match(lines[2] ?? '', /→ databasecluster success in 5 ms/);
    // two alike stay two lines; successes are never folded
    assert.equal(formatOutcomes([failing(1), failing(2)]).length, 2);
  });
});
