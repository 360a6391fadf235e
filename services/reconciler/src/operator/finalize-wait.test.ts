// What a finalize's answer means: nothing is done (the finalizer goes),
// `{ requeueAfterMs }` is a wait of at least a second (never a spin), and
// the status it shows while waiting stays the same from one try to the next.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@kubebus/shared/events';
import { z } from 'zod';
import {
  checkedFinalizeFields,
  finalizeReport,
  finalizeWait,
  finalizingStatus,
  MIN_FINALIZE_WAIT_MS,
} from './finalize-wait.js';

const object = (status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'platform.example.com/v1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 'u', resourceVersion: '1', generation: 2 },
  ...(status === undefined ? {} : { status }),
});

describe('a finalize that waits', () => {
  it('is done when it returns nothing (or anything without requeueAfterMs)', () => {
    assert.equal(finalizeWait(undefined), undefined);
    assert.equal(finalizeWait(null), undefined);
    assert.equal(finalizeWait({}), undefined);
  });

  it('waits as long as it asks, and at least a second', () => {
    assert.equal(finalizeWait({ requeueAfterMs: 2_000 }), 2_000);
    for (const asked of [10, Number.POSITIVE_INFINITY])
      assert.equal(finalizeWait({ requeueAfterMs: asked }), MIN_FINALIZE_WAIT_MS, String(asked));
  });

  it('is done when it asks for no wait, as reconcile reads requeueAfterMs', () => {
    for (const asked of [0, -5, Number.NaN, '2000', undefined])
      assert.equal(finalizeWait({ requeueAfterMs: asked }), undefined, String(asked));
  });

  it('shows Ready=False, reason Finalizing, the status fields kept', () => {
    const status = finalizingStatus(
      object({ namespace: 'tenant-acme', observedGeneration: 2 }),
      'platform.example.com/tenant',
    );
    assert.equal(status['namespace'], 'tenant-acme');
    const [ready, ...others] = status['conditions'] as Record<string, unknown>[];
    assert.deepEqual(others, []);
    assert.equal(ready?.['reason'], 'Finalizing');
    assert.equal(ready?.['status'], 'False');
    assert.match(String(ready?.['message']), /finalizer platform\.example\.com\/tenant stays/);
  });

  it('writes the same status when asked again: no new write, no new reconcile', () => {
    const first = finalizingStatus(object(), 'f', {}, new Date('2026-12-06T20:00:00Z'));
    const again = finalizingStatus(object(first), 'f', {}, new Date('2026-12-06T20:05:00Z'));
    assert.deepEqual(again, first);
  });

  it('shows what it waits for: its message, its fields over the rest', () => {
    const report = finalizeReport({
      requeueAfterMs: 2_000,
      message: '2 backups still being deleted',
      status: { phase: 'Deleting', conditions: [], observedGeneration: 9 },
    });
    const status = finalizingStatus(
      object({ namespace: 'tenant-acme', phase: 'Ready' }),
      'f',
      report,
    );
    assert.equal(status['namespace'], 'tenant-acme');
    assert.equal(status['phase'], 'Deleting');
    // the runtime's own fields stay the runtime's
    const [ready, ...others] = status['conditions'] as Record<string, unknown>[];
    assert.deepEqual(others, []);
    assert.equal(ready?.['message'], '2 backups still being deleted');
    assert.equal(ready?.['observedGeneration'], 2);
    assert.equal(status['observedGeneration'], undefined);
  });

  it('takes a message and fields only of their shape', () => {
    assert.deepEqual(finalizeReport({ requeueAfterMs: 1, message: '  ', status: [1] }), {});
    assert.deepEqual(finalizeReport({ requeueAfterMs: 1, message: 7, status: 'x' }), {});
    assert.deepEqual(finalizeReport(undefined), {});
  });

  it('checks the fields it returned alone, each by its rule, and refuses without throwing', () => {
    const schema = z
      .object({
        url: z.string(),
        phase: z.enum(['Pending', 'Deleting']).default('Pending'),
        backups: z.array(z.string()).default([]),
      })
      // a rule across fields: zod's .partial() would throw on it
      .refine((status) => status.url !== '');
    // the status lacks the required url (deleted before its first reconcile): phase alone is
    // fine, and no default fills what it did not return
    assert.deepEqual(checkedFinalizeFields(schema, { phase: 'Deleting' }), {
      fields: { phase: 'Deleting' },
    });
    const refused = checkedFinalizeFields(schema, { phase: 'Gone', backups: ['b1'], extra: 1 });
    assert.deepEqual(refused.fields, { backups: ['b1'] });
    assert.match(
      refused.refused ?? '',
      /^status\.phase: .*; status\.extra: not a field of the status schema$/,
    );
  });
});
