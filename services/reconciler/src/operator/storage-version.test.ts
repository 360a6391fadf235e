import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineOperator, defineResource, type RuntimeContext } from '@kubebus/shared/definition';
import type { KubeObject } from '@kubebus/shared/events';
import { KnownResources } from './known-resources.js';
import { operatorContext } from './operator-context.js';
import { inStorageVersion, StorageVersionReader } from './storage-version.js';

const Box = defineResource({
  group: 'test.kubebus.dev',
  kind: 'Box',
  scope: 'Namespaced',
  versions: {
    v1alpha1: { spec: z.object({ size: z.int() }), status: z.object({}) },
    v1: { spec: z.object({ dimensions: z.object({ size: z.int() }) }), status: z.object({}) },
  },
  storage: 'v1',
  convert: {
    v1alpha1: {
      toStorage: ({ spec }) => ({ spec: { dimensions: { size: spec.size } } }),
      fromStorage: ({ spec }) => ({ spec: { size: spec.dimensions?.size } }),
    },
  },
});

const box = (apiVersion: string, spec: unknown): KubeObject => ({
  apiVersion,
  kind: 'Box',
  metadata: { name: 'b', namespace: 'n', uid: 'u', resourceVersion: '3', generation: 1 },
  spec,
});

const never = () => Promise.reject(new Error('the apiserver was asked'));

describe('the object a reconcile gets', () => {
  it('is the record itself when recorded in the storage version', async () => {
    const recorded = box('test.kubebus.dev/v1', { dimensions: { size: 2 } });
    assert.equal(await inStorageVersion(Box, recorded, never), recorded);
  });

  it('is converted in-process when recorded in another version this release defines', async () => {
    const converted = await inStorageVersion(
      Box,
      box('test.kubebus.dev/v1alpha1', { size: 2 }),
      never,
    );
    assert.deepEqual(converted, box('test.kubebus.dev/v1', { dimensions: { size: 2 } }));
  });

  it('is read again from the apiserver when recorded in a version this release does not know', async () => {
    const fresh = box('test.kubebus.dev/v1', { dimensions: { size: 5 } });
    const got = await inStorageVersion(Box, box('test.kubebus.dev/v2', { volume: 5 }), () =>
      Promise.resolve(fresh),
    );
    assert.equal(got, fresh);
  });

  it('fails the reconcile, retried, when the conversion throws', async () => {
    const Broken = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Box',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({}), status: z.object({}) },
        v1: { spec: z.object({}), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: () => {
            throw new Error('no size');
          },
          fromStorage: (object) => object,
        },
      },
    });
    await assert.rejects(
      inStorageVersion(Broken, box('test.kubebus.dev/v1alpha1', {}), never),
      /the object recorded as test.kubebus.dev\/v1alpha1: converting Box n\/b from v1alpha1 to the storage version failed: no size/,
    );
  });
});

const noApiserver = { getIfExists: never };

describe('the storage version reader', () => {
  it('answers an object in the storage version as it is, synchronously, with nothing to await', () => {
    const reader = new StorageVersionReader(Box, noApiserver);
    assert.equal(reader.apiVersion, 'test.kubebus.dev/v1');
    assert.equal(reader.needed(box('test.kubebus.dev/v1', { dimensions: { size: 2 } })), false);
    assert.equal(reader.needed(box('test.kubebus.dev/v1alpha1', { size: 2 })), true);
  });

  it('answers the same list when every object is in the storage version, and converts the others', async () => {
    const reader = new StorageVersionReader(Box, noApiserver);
    const stored = [box('test.kubebus.dev/v1', { dimensions: { size: 2 } })];
    assert.equal(await reader.all(stored), stored);
    assert.deepEqual(await reader.all([...stored, box('test.kubebus.dev/v1alpha1', { size: 4 })]), [
      ...stored,
      box('test.kubebus.dev/v1', { dimensions: { size: 4 } }),
    ]);
  });
});

describe("ctx.get and ctx.list of the operator's own resource", () => {
  it('answer it in the storage version whatever version the bus recorded', async () => {
    const operator = defineOperator({
      name: 'boxes',
      for: Box,
      reconcile: () => Promise.resolve(undefined),
    });
    const recorded = box('test.kubebus.dev/v1alpha1', { size: 7 });
    const inV1 = box('test.kubebus.dev/v1', { dimensions: { size: 7 } });
    const runtime: RuntimeContext = {
      signal: new AbortController().signal,
      log: undefined as never,
      reconcileId: 'r',
      traceparent: '',
      attempt: 1,
    };
    const ctx = operatorContext(
      {
        operator,
        known: new KnownResources(operator),
        reader: { read: () => Promise.resolve(recorded) },
        client: undefined as never,
        applied: undefined as never,
        fieldManager: 'boxes',
        instance: 'i',
        dryRun: false,
        deps: undefined,
        lister: { list: () => Promise.resolve([recorded]) },
        storage: new StorageVersionReader(Box, noApiserver),
        touched: new Set(),
      },
      inV1,
      runtime,
    );
    assert.deepEqual(await ctx.get(Box, 'b'), inV1);
    assert.deepEqual(await ctx.list(Box), [inV1]);
  });
});
