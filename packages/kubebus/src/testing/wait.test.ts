import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describePredicate, describeSeen, waitForObject } from './wait.js';

interface Site {
  readonly metadata: { readonly name: string; readonly managedFields?: unknown[] };
  readonly status?: { readonly phase?: string };
}

const target = { target: 'Site default/a', predicate: 'phase Ready' };

describe('waitForObject', () => {
  it('returns the first object the predicate holds for, reading until it does', async () => {
    const phases = ['Pending', 'Pending', 'Ready'];
    let reads = 0;
    const read = () =>
      Promise.resolve<Site>({ metadata: { name: 'a' }, status: { phase: phases[reads++] ?? '' } });
    const seen = await waitForObject(read, (s) => s?.status?.phase === 'Ready', target, 5_000);
    assert.equal(seen?.status?.phase, 'Ready');
    assert.equal(reads, 3);
  });

  it('waits for a delete: undefined is an answer', async () => {
    let reads = 0;
    const read = () =>
      Promise.resolve<Site | undefined>(++reads < 3 ? { metadata: { name: 'a' } } : undefined);
    assert.equal(await waitForObject(read, (s) => s === undefined, target, 5_000), undefined);
    assert.equal(reads, 3);
  });

  it('times out with what it waited for, the object last seen and the predicate last error', async () => {
    const read = () =>
      Promise.resolve<Site>({
        metadata: { name: 'a', managedFields: [{ manager: 'noise' }] },
        status: { phase: 'Pending' },
      });
    await assert.rejects(
      waitForObject(
        read,
        (s) => {
          assert.equal(s?.status?.phase, 'Ready');
          return true;
        },
        target,
        300,
      ),
      (error: Error) => {
        assert.match(
          error.message,
          /^timed out after 300 ms waiting for Site default\/a to satisfy phase Ready; /,
        );
        assert.match(
          error.message,
          /last seen: \{"metadata":\{"name":"a"\},"status":\{"phase":"Pending"\}\}/,
        );
        assert.match(error.message, /the predicate threw: Expected values to be strictly equal/);
        assert.doesNotMatch(error.message, /noise/);
        return true;
      },
    );
  });

  it('says when the object could not be read at all', async () => {
    const read = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1\nstack'));
    await assert.rejects(
      waitForObject(read, () => true, target, 200),
      /never read it; the last read failed: connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
  });
});

describe('timeout wording', () => {
  it('names a predicate by its words, else by its source, cut short', () => {
    assert.equal(
      describePredicate(() => true, 'it is Ready'),
      'it is Ready',
    );
    // its source as the loader left it (tsx compacts it: s=>s.ok)
    const ok = (s: { ok: boolean }) => s.ok;
    assert.equal(describePredicate(ok), ok.toString());
    assert.match(describePredicate(ok), /s\.ok/);
    const long = describePredicate(
      (s: { status?: { phase?: string; readyReplicas?: number; url?: string } }) =>
        s.status?.phase === 'Ready' &&
        s.status.readyReplicas === 3 &&
        s.status.url === 'http://a-rather-long-host-name.default.svc.cluster.local',
    );
    assert.ok(long.length <= 120 && long.endsWith('…'));
  });

  it('cuts a large object short and names a missing one', () => {
    assert.equal(describeSeen(undefined), 'no such object');
    assert.equal(describeSeen({ data: 'y'.repeat(2_000) }, 50).length, 50);
  });
});
