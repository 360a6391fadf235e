// The work loop with an in-memory transport: per-key serialization, latest
// wins, bounded concurrency, retries, terminal errors and dead letters.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../obs/logger.js';
import { Controller, type ControllerOptions } from './controller.js';
import { runtimeMetrics } from './metrics.js';
import type { ObjectKey } from './object-key.js';
import { KubeApiError } from '../kube/api-error.js';
import { TerminalError } from '../definition/terminal-error.js';
import { markOperatorError } from '../errors/error-origin.js';
import { reconcilerFunc, type RuntimeResult } from './reconciler.js';
import type { WorkItem } from './work-item.js';

const silent = createLogger({
  service: 'test',
  destination: new Writable({
    write: (_chunk, _enc, done) => {
      done();
    },
  }),
});

interface Recorded {
  readonly name: string;
  readonly fate: string[];
}

function item(
  name: string,
  fates: string[],
  onRetry?: (delayMs: number) => void,
  id?: string,
): WorkItem & Recorded {
  return {
    name,
    fate: fates,
    ...(id === undefined ? {} : { id }),
    key: { group: 'g', resource: 'r', namespace: 'ns', name },
    enqueuedAt: Date.now(),
    ack: () => fates.push('ack'),
    retry: (delayMs) => {
      fates.push(`retry:${delayMs}`);
      onRetry?.(delayMs);
    },
    terminate: (reason) => fates.push(`term:${reason}`),
    inProgress: () => undefined,
  };
}

function options(overrides: Partial<ControllerOptions> = {}): ControllerOptions {
  return {
    name: 'test',
    maxConcurrent: 4,
    retry: { baseMs: 1, capMs: 1, maxAttempts: 3 },
    heartbeatMs: 1_000,
    metrics: runtimeMetrics(new Registry()),
    log: silent,
    onDeadLetter: async () => undefined,
    ...overrides,
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(check(), 'condition not reached');
};

describe('controller work loop', () => {
  it('never runs two reconciles of one object at once, and the latest waiting request wins', async () => {
    const running = new Set<string>();
    let overlaps = 0;
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const controller = new Controller(
      reconcilerFunc(async ({ key }) => {
        if (running.has(key.name)) overlaps++;
        running.add(key.name);
        runs.push(key.name);
        if (runs.length === 1) await gate;
        running.delete(key.name);
        return undefined;
      }),
      options(),
    );
    const fates: string[][] = [[], [], [], []];
    controller.dispatch(item('hot', fates[0] ?? []));
    await until(() => runs.length === 1);
    controller.dispatch(item('hot', fates[1] ?? [])); // waits for the first
    controller.dispatch(item('hot', fates[2] ?? [])); // replaces the second
    controller.dispatch(item('cold', fates[3] ?? [])); // another object runs meanwhile
    await until(() => runs.length === 2);
    assert.deepEqual(runs, ['hot', 'cold']);
    release();
    await until(() => controller.idle);
    assert.equal(overlaps, 0);
    assert.deepEqual(runs, ['hot', 'cold', 'hot']);
    assert.deepEqual(fates, [['ack'], ['ack'], ['ack'], ['ack']]);
  });

  it('bounds concurrency', async () => {
    let active = 0;
    let peak = 0;
    const controller = new Controller(
      reconcilerFunc(async () => {
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        return undefined;
      }),
      options({ maxConcurrent: 3 }),
    );
    for (let i = 0; i < 20; i++) controller.dispatch(item(`o${i}`, []));
    await until(() => controller.idle);
    assert.equal(peak, 3);
  });

  it('retries a failing object with backoff, then dead-letters it; others go on', async () => {
    const parked: { name: string; attempts: number }[] = [];
    const attempts: number[] = [];
    const fates: string[] = [];
    const redeliver = () => {
      setTimeout(() => controller.dispatch(item('poison', fates, redeliver)), 1);
    };
    const controller: Controller = new Controller(
      reconcilerFunc(async ({ key }, { attempt }): Promise<RuntimeResult> => {
        if (key.name === 'poison') {
          attempts.push(attempt);
          throw new Error('always fails');
        }
        return undefined;
      }),
      options({
        onDeadLetter: async (work, _error, count) => {
          parked.push({ name: work.key.name, attempts: count });
        },
      }),
    );
    const healthy: string[] = [];
    controller.dispatch(item('poison', fates, redeliver));
    controller.dispatch(item('healthy', healthy));
    await until(() => parked.length === 1);
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(parked, [{ name: 'poison', attempts: 3 }]);
    assert.deepEqual(fates, ['retry:1', 'retry:1', 'term:dead-lettered']);
    assert.deepEqual(healthy, ['ack']);
  });

  it('terminates a TerminalError without retrying, and honours requeue-after', async () => {
    const terminal: string[] = [];
    const requeued: string[] = [];
    const controller = new Controller(
      reconcilerFunc(async ({ key }: { key: ObjectKey }) => {
        if (key.name === 'bad') throw new TerminalError('invalid spec');
        return { requeueAfterMs: 60_000 };
      }),
      options(),
    );
    controller.dispatch(item('bad', terminal));
    controller.dispatch(item('periodic', requeued));
    await until(() => controller.idle);
    assert.deepEqual(terminal, ['term:invalid spec']);
    assert.deepEqual(requeued, ['retry:60000']);
  });

  it('hands requeues and retries to the transport to wait apart, a retry with its failures', async () => {
    const fates: string[] = [];
    const parked: string[] = [];
    const apart = (name: string, failedBefore?: { attempts: number; streak: number }) => ({
      ...item(name, fates),
      ...(failedBefore === undefined ? {} : { failedBefore }),
      later: (delayMs: number, failures?: { attempts: number; streak: number }) => {
        fates.push(`${name} later:${delayMs}${failures ? ` ${JSON.stringify(failures)}` : ''}`);
        return true;
      },
    });
    const controller = new Controller(
      reconcilerFunc(async ({ key }: { key: ObjectKey }) => {
        if (key.name === 'periodic') return { requeueAfterMs: 60_000 };
        if (key.name === 'unavailable') throw new KubeApiError(503, 'ServiceUnavailable', 'down');
        // something under way elsewhere (another reconcile's external call) names its wait
        if (key.name === 'waiting')
          throw Object.assign(new Error('claimed by another reconcile'), { waitMs: 42_000 });
        throw new Error('boom');
      }),
      options({
        retry: { baseMs: 5, capMs: 5, maxAttempts: 3 },
        onDeadLetter: async (dead, _error, attempts) => {
          parked.push(`${dead.key.name} after ${attempts}`);
        },
      }),
    );
    controller.dispatch(apart('periodic'));
    controller.dispatch(apart('failing'));
    // the retry of a request that failed twice before, waiting apart: its third failure is its last
    controller.dispatch(apart('third', { attempts: 2, streak: 2 }));
    // transient failures never count against the budget, only the streak
    controller.dispatch(apart('unavailable', { attempts: 1, streak: 4 }));
    // a wait: the time it names, neither the budget nor the streak touched
    controller.dispatch(apart('waiting', { attempts: 1, streak: 4 }));
    await until(() => controller.idle);
    assert.deepEqual(fates.sort(), [
      'failing later:5 {"attempts":1,"streak":1}',
      'periodic later:60000',
      'term:dead-lettered',
      'unavailable later:5 {"attempts":1,"streak":5}',
      'waiting later:42000 {"attempts":1,"streak":4}',
    ]);
    assert.deepEqual(parked, ['third after 3']);
  });

  it('counts an outside system’s outage as attempts that spend no budget', async () => {
    const attempts: number[] = [];
    const parked: number[] = [];
    const redeliver = () => {
      setTimeout(() => controller.dispatch(item('db', [], redeliver)), 1);
    };
    const refused = () =>
      markOperatorError(
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
      );
    // five tries the database refuses, then it answers with errors: the budget (3) is for those
    const controller: Controller = new Controller(
      reconcilerFunc(async (_request, { attempt }): Promise<RuntimeResult> => {
        attempts.push(attempt);
        throw attempt <= 5 ? refused() : new Error('starting up');
      }),
      options({
        onDeadLetter: async (_work, _error, count) => {
          parked.push(count);
        },
      }),
    );
    controller.dispatch(item('db', [], redeliver));
    await until(() => parked.length === 1);
    assert.deepEqual(attempts, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(parked, [8]);
  });

  it('counts a change that comes while a retry waits apart against the same budget', async () => {
    const fates: string[] = [];
    const change = () => ({
      ...item('x', fates),
      later: (_delayMs: number, failures?: { attempts: number; streak: number }) => {
        fates.push(`later ${JSON.stringify(failures)}`);
      },
    });
    const controller = new Controller(
      reconcilerFunc(async () => {
        throw new Error('boom');
      }),
      options({ retry: { baseMs: 5, capMs: 5, maxAttempts: 3 } }),
    );
    // each a new change of the object (a watcher's mark carries no failures)
    for (let i = 0; i < 3; i++) {
      controller.dispatch(change());
      await until(() => controller.idle);
    }
    assert.deepEqual(fates, [
      'later {"attempts":1,"streak":1}',
      'later {"attempts":2,"streak":2}',
      'term:dead-lettered',
    ]);
  });

  it('never acks a request in place of its own redelivery (the surviving copy still retries)', async () => {
    // One JetStream message delivered twice (ack wait passed while it waited):
    // acking the "superseded" copy would ack the message itself and lose the work.
    const fates: string[] = [];
    let calls = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const controller = new Controller(
      reconcilerFunc(async ({ key }) => {
        if (key.name === 'busy') await gate;
        if (key.name === 'x') {
          calls++;
          throw new KubeApiError(0, 'NoResponse', 'no answer from the apiserver');
        }
        return undefined;
      }),
      options({ maxConcurrent: 1 }),
    );
    controller.dispatch(item('busy', []));
    controller.dispatch(item('x', fates, undefined, 'WORK:7'));
    controller.dispatch(item('x', fates, undefined, 'WORK:7')); // the redelivery
    release();
    await until(() => calls === 1 && controller.idle);
    assert.equal(fates.includes('ack'), false, `acked: ${fates.join(',')}`);
    assert.equal(fates.length, 1);
    assert.match(fates[0] ?? '', /^retry:/);
  });

  it('keeps waiting requests alive with heartbeats, so the transport does not redeliver them', async () => {
    let beats = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const controller = new Controller(
      reconcilerFunc(async () => {
        await gate;
        return undefined;
      }),
      options({ maxConcurrent: 1, heartbeatMs: 5 }),
    );
    controller.dispatch(item('running', []));
    controller.dispatch({
      ...item('waiting', []),
      inProgress: () => {
        beats++;
      },
    });
    await until(() => beats >= 3);
    release();
    await until(() => controller.idle);
  });

  it('waits out an unavailable dependency without spending the budget or dead-lettering', async () => {
    const parked: string[] = [];
    const fates: string[] = [];
    let calls = 0;
    const redeliver = () => {
      setTimeout(() => controller.dispatch(item('o', fates, redeliver)), 1);
    };
    const controller: Controller = new Controller(
      reconcilerFunc(async (_request, { attempt }) => {
        calls++;
        assert.equal(attempt, 1, 'transient failures do not advance the attempt');
        if (calls <= 12)
          throw new KubeApiError(503, 'ServiceUnavailable', 'apiserver answered 503');
        return undefined;
      }),
      options({
        onDeadLetter: async (work) => {
          parked.push(work.key.name);
        },
      }),
    );
    controller.dispatch(item('o', fates, redeliver));
    await until(() => fates.includes('ack'));
    assert.equal(calls, 13);
    assert.deepEqual(parked, []);
  });

  it("waits out the operator's own RBAC refusing: no budget spent, said at error, counted", async () => {
    const parked: string[] = [];
    const fates: string[] = [];
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({
      service: 'test',
      destination: new Writable({
        write: (chunk: Buffer, _enc, done) => {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    });
    const metrics = runtimeMetrics(new Registry());
    let calls = 0;
    const redeliver = () => {
      setTimeout(() => controller.dispatch(item('o', fates, redeliver)), 1);
    };
    const controller: Controller = new Controller(
      reconcilerFunc(async (_request, { attempt }) => {
        calls++;
        assert.equal(attempt, 1, 'an RBAC refusal does not advance the attempt');
        // until an admin applies the RBAC
        if (calls <= 8)
          throw new KubeApiError(
            403,
            'Forbidden',
            [
              'apiserver answered 403 Forbidden: rolebindings.rbac.authorization.k8s.io "t" is forbidden: user "system:serviceaccount:ops:op" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
              '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
              '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
            ].join('\n'),
          );
        return undefined;
      }),
      options({
        log,
        metrics,
        onDeadLetter: async (work) => {
          parked.push(work.key.name);
        },
      }),
    );
    controller.dispatch(item('o', fates, redeliver));
    await until(() => fates.includes('ack'));
    assert.equal(calls, 9);
    assert.deepEqual(parked, []);
    const refused = lines.filter((line) => typeof line['refused'] === 'string');
    // 8 refusals, said at the 1st, 2nd, 4th and 8th: a refusal lasting hours is not a line a retry
    assert.deepEqual(
      refused.map((line) => line['refusals']),
      [1, 2, 4, 8],
    );
    for (const line of refused) {
      assert.equal(line['level'], 'error', 'an admin must act: at error');
      assert.equal(line['err'], undefined, 'one line, no stack');
      // what to declare and apply, the count of missing rules, not the rules
      assert.match(String(line['refused']), /declare the role it binds in `rbac\.bind`/);
      assert.match(String(line['refused']), /apply the RBAC `kubebus generate` writes/);
      assert.match(String(line['refused']), /\(2 rules not held\)$/);
    }
    const counted = await metrics.transientRetries.get();
    assert.deepEqual(
      counted.values.map(({ labels, value }) => ({ labels, value })),
      [{ labels: { controller: 'test', class: 'forbidden' }, value: 8 }],
    );
  });

  it('revoking a key aborts its running reconcile and hands the request back, uncounted', async () => {
    const fates: string[] = [];
    const controller = new Controller(
      reconcilerFunc(async (_request, { signal }) => {
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            reject(new Error('aborted'));
          }),
        );
        return undefined;
      }),
      options(),
    );
    controller.dispatch(item('o', fates));
    await until(() => !controller.idle);
    await new Promise((r) => setTimeout(r, 5));
    controller.revoke((key) => key.name === 'o');
    await until(() => controller.idle);
    assert.deepEqual(fates, ['retry:0']);
  });

  it('a lease no longer trusted: the write is refused, a failure is handed back, not counted or parked', async () => {
    const fates: string[] = [];
    const deadLetters: unknown[] = [];
    let trusted = true;
    let wrote = 0;
    const controller = new Controller(
      reconcilerFunc(async (request, { fence }) => {
        trusted = false; // paused past the lease, say, mid-reconcile
        if (request.key.name === 'writes') {
          fence?.();
          wrote++;
        }
        throw new Error('the apiserver request timed out');
      }),
      options({
        retry: { baseMs: 1, capMs: 1, maxAttempts: 1 },
        onDeadLetter: async (letter) => {
          deadLetters.push(letter);
        },
      }),
    );
    for (const [index, name] of ['writes', 'fails'].entries()) {
      trusted = true;
      controller.dispatch({ ...item(name, fates), mayAct: () => trusted });
      await until(() => controller.idle && fates.length > index);
    }
    assert.equal(wrote, 0, 'the fence refused the write');
    assert.deepEqual(fates, ['retry:0', 'retry:0']);
    assert.deepEqual(deadLetters, []);
  });

  it('a reconcile that releases its worker lets the next object start; its own object stays busy and unacked', async () => {
    const gates = new Map<string, () => void>();
    const runs: string[] = [];
    let sameAtOnce = 0;
    const active = new Set<string>();
    const controller = new Controller(
      reconcilerFunc(async ({ key }, context) => {
        if (active.has(key.name)) sameAtOnce++;
        active.add(key.name);
        runs.push(key.name);
        // the last step waits on another pool: the worker goes back first
        context.releaseWorker?.();
        await new Promise<void>((resolve) => gates.set(`${key.name}#${runs.length}`, resolve));
        active.delete(key.name);
        return undefined;
      }),
      options({ maxConcurrent: 1 }),
    );
    const fates: Record<string, string[]> = { a: [], b: [] };
    controller.dispatch(item('a', fates['a'] ?? [], undefined, 'a-1'));
    controller.dispatch(item('b', fates['b'] ?? [], undefined, 'b-1'));
    // one worker, yet both run: a's worker was released while a waits
    await until(() => runs.includes('a') && runs.includes('b'));
    assert.deepEqual(fates, { a: [], b: [] }, 'acked before the reconcile returned');
    // a newer request for a waits for a's reconcile, however many workers are free
    controller.dispatch(item('a', fates['a'] ?? [], undefined, 'a-2'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(runs.filter((name) => name === 'a').length, 1);
    gates.get('a#1')?.();
    await until(() => runs.filter((name) => name === 'a').length === 2);
    for (const [gate, open] of gates) if (gate !== 'a#1') open();
    await until(() => gates.size === 3);
    gates.get('a#3')?.();
    await until(() => controller.idle);
    assert.equal(sameAtOnce, 0);
    assert.deepEqual(fates, { a: ['ack', 'ack'], b: ['ack'] });
  });
});

describe('controller work loop: requests whose process may have died running them', () => {
  it('runs suspects one at a time, each after its start is recorded, beside ordinary requests', async () => {
    const running = new Set<string>();
    const events: string[] = [];
    let maxSuspectsAtOnce = 0;
    const gates = new Map<string, () => void>();
    const suspects = new Set(['s1', 's2', 's3']);
    const controller = new Controller(
      reconcilerFunc(async ({ key }) => {
        running.add(key.name);
        events.push(`run:${key.name}`);
        maxSuspectsAtOnce = Math.max(
          maxSuspectsAtOnce,
          [...running].filter((name) => suspects.has(name)).length,
        );
        await new Promise<void>((resolve) => gates.set(key.name, resolve));
        running.delete(key.name);
        return undefined;
      }),
      options({ maxConcurrent: 8 }),
    );
    const fates: Record<string, string[]> = {};
    for (const name of ['s1', 'plain', 's2', 's3']) {
      fates[name] = [];
      const base = item(name, fates[name]);
      controller.dispatch(
        suspects.has(name)
          ? {
              ...base,
              started: async () => {
                events.push(`started:${name}`);
              },
            }
          : base,
      );
    }
    await until(() => running.has('s1') && running.has('plain'));
    assert.ok(!running.has('s2') && !running.has('s3'), 'a second suspect ran beside the first');
    for (const name of ['s1', 's2', 's3']) {
      await until(() => gates.has(name));
      gates.get(name)?.();
    }
    gates.get('plain')?.();
    await until(() => controller.idle);
    assert.equal(maxSuspectsAtOnce, 1);
    for (const name of suspects)
      assert.ok(events.indexOf(`started:${name}`) < events.indexOf(`run:${name}`), name);
    assert.deepEqual(
      Object.values(fates).map((f) => f.join()),
      ['ack', 'ack', 'ack', 'ack'],
    );
  });
});
