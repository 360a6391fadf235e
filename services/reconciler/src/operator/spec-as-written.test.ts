import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import type { KubeObject } from '@kubebus/shared/events';
import {
  describeAsWritten,
  describeInvalidSpec,
  specWriters,
  type InvalidSpec,
} from './spec-as-written.js';

const host = z
  .string()
  .min(1)
  .refine((name) => !name.startsWith('*'), 'wildcards are not allowed');
const versions = {
  v1alpha1: {
    spec: z.object({ dnsNames: z.array(host), port: z.int().default(443) }),
    status: z.object({ ok: z.boolean() }),
  },
  v1: {
    spec: z.object({ hosts: z.array(host), port: z.int().default(443) }),
    status: z.object({ ok: z.boolean() }),
  },
};
const basics = { group: 'probe.kubebus.dev', kind: 'Cert', scope: 'Namespaced' } as const;
const Cert = defineResource({
  ...basics,
  versions,
  storage: 'v1',
  convert: {
    v1alpha1: {
      toStorage: ({ spec }) => ({ spec: { hosts: spec.dnsNames, port: spec.port } }),
      fromStorage: ({ spec }) => ({ spec: { dnsNames: spec.hosts, port: spec.port } }),
    },
  },
});

const V1 = 'probe.kubebus.dev/v1';
const V1ALPHA1 = 'probe.kubebus.dev/v1alpha1';

/**
 * managedFields as kube-apiserver v1.37.2 (the test bed) recorded them for a
 * Cert of the definition above, served with its conversion webhook by
 * `kubebus run`, read in the storage version v1 (2026-12-06). Each name says
 * how the spec was written.
 */
const statusWriter = {
  apiVersion: V1,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:observedGeneration': {} } },
  manager: 'kubebus-status-writer',
  operation: 'Apply',
  subresource: 'status',
  time: '2026-12-06T19:16:05Z',
};
const CAPTURED = {
  /** kubectl apply --server-side of a v1alpha1 manifest */
  appliedAsV1alpha1: [
    statusWriter,
    {
      apiVersion: V1ALPHA1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:dnsNames': {} } },
      manager: 'kubectl',
      operation: 'Apply',
      time: '2026-12-06T19:16:05Z',
    },
  ],
  /** created (POST) as v1alpha1 */
  createdAsV1alpha1: [
    statusWriter,
    {
      apiVersion: V1ALPHA1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { '.': {}, 'f:dnsNames': {} } },
      manager: 'kubectl-create',
      operation: 'Update',
      time: '2026-12-06T19:16:05Z',
    },
  ],
  /** applied as v1 by one manager, then merge-patched as v1alpha1 by another (the first one's entry is gone) */
  patchedAsV1alpha1: [
    statusWriter,
    {
      apiVersion: V1ALPHA1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:dnsNames': {} } },
      manager: 'kubectl-edit',
      operation: 'Update',
      time: '2026-12-06T19:16:06Z',
    },
  ],
  /** applied as v1 */
  appliedAsV1: [
    statusWriter,
    {
      apiVersion: V1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:hosts': {} } },
      manager: 'kubectl',
      operation: 'Apply',
      time: '2026-12-06T19:16:05Z',
    },
  ],
  /** valid, applied as v1alpha1 by alice; reconciled (the finalizer set); then made invalid as v1 by bob */
  takenOverAsV1: [
    {
      apiVersion: V1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:hosts': {} } },
      manager: 'bob',
      operation: 'Apply',
      time: '2026-12-06T19:19:48Z',
    },
    {
      apiVersion: V1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:finalizers': { 'v:"probe.kubebus.dev/certs"': {} } } },
      manager: 'kubebus-certs-finalizer',
      operation: 'Apply',
      time: '2026-12-06T19:19:48Z',
    },
    { ...statusWriter, time: '2026-12-06T19:19:48Z' },
  ],
  /** invalid dnsNames applied as v1alpha1 by alice; a second later, bob applies only the port as v1 */
  portAppliedAsV1Later: [
    {
      apiVersion: V1ALPHA1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:dnsNames': {} } },
      manager: 'alice',
      operation: 'Apply',
      time: '2026-12-06T19:19:49Z',
    },
    {
      apiVersion: V1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:port': {} } },
      manager: 'bob',
      operation: 'Apply',
      time: '2026-12-06T19:19:50Z',
    },
    { ...statusWriter, time: '2026-12-06T19:19:50Z' },
  ],
  /** the same value applied as v1alpha1 by alice, then as v1 by bob: a no-op apply, recorded without a time */
  sameValueAppliedAsV1: [
    {
      apiVersion: V1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:hosts': {} } },
      manager: 'bob',
      operation: 'Apply',
    },
    {
      apiVersion: V1ALPHA1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:dnsNames': {} } },
      manager: 'alice',
      operation: 'Apply',
      time: '2026-12-06T19:19:48Z',
    },
    { ...statusWriter, time: '2026-12-06T19:19:48Z' },
  ],
};

const OURS = new Set(['kubebus-certs', 'kubebus-certs-finalizer']);

/** The Cert as the bus records it (in the storage version, without managedFields). */
const cert = (hosts: string[], metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: V1,
  kind: 'Cert',
  metadata: {
    name: 'c',
    namespace: 'n',
    uid: 'u',
    resourceVersion: '7',
    generation: 2,
    ...metadata,
  },
  spec: { hosts, port: 443 },
});

/** What the reconciler found: the storage version's issues. */
const issuesOf = (object: KubeObject) => {
  const parsed = Cert.definition.spec.safeParse(object['spec']);
  assert.ok(!parsed.success);
  return parsed.error.issues;
};

const asWritten = (managedFields: unknown[], hosts = ['*.example.com']) => {
  const object = cert(hosts);
  return describeAsWritten(Cert, object, issuesOf(object), specWriters(managedFields, OURS));
};

const never = () => Promise.reject(new Error('the apiserver was asked'));
const silent = { warn: () => undefined };

describe('the managers that wrote a spec', () => {
  it('are the entries that own spec fields, status and finalizer entries left out', () => {
    assert.deepEqual(specWriters(CAPTURED.appliedAsV1alpha1, OURS), [
      { manager: 'kubectl', apiVersion: V1ALPHA1, fields: { 'f:dnsNames': {} } },
    ]);
    assert.deepEqual(
      specWriters(CAPTURED.takenOverAsV1, OURS).map((writer) => writer.manager),
      ['bob'],
    );
  });

  it('come the most recent first; one recorded without a time (a no-op apply) last', () => {
    const managers = (fields: unknown[]) =>
      specWriters(fields, OURS).map(({ manager, apiVersion }) => `${manager} ${apiVersion}`);
    assert.deepEqual(managers(CAPTURED.portAppliedAsV1Later), [`bob ${V1}`, `alice ${V1ALPHA1}`]);
    assert.deepEqual(managers(CAPTURED.sameValueAppliedAsV1), [`alice ${V1ALPHA1}`, `bob ${V1}`]);
  });

  it("leave this operator's own managers out, and anything that is not an entry", () => {
    const ours = {
      ...CAPTURED.appliedAsV1[1],
      manager: 'kubebus-certs',
      time: '2099-01-01T00:00:00Z',
    };
    assert.deepEqual(
      specWriters([...CAPTURED.appliedAsV1alpha1, ours, null, 'x'], OURS).map((w) => w.manager),
      ['kubectl'],
    );
    assert.deepEqual(specWriters(undefined, OURS), []);
  });
});

describe("an invalid spec's message", () => {
  it('names the fields of the version it was applied in', () => {
    assert.equal(
      asWritten(CAPTURED.appliedAsV1alpha1),
      `spec.dnsNames.0: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
  });

  it('names the fields of the version it was created or patched in', () => {
    assert.equal(
      asWritten(CAPTURED.createdAsV1alpha1, ['a.example', '*.b.example']),
      `spec.dnsNames.1: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
    assert.equal(
      asWritten(CAPTURED.patchedAsV1alpha1),
      `spec.dnsNames.0: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
  });

  it('is as it always was when the spec was written in the storage version', () => {
    assert.equal(asWritten(CAPTURED.appliedAsV1), 'spec.hosts.0: wildcards are not allowed');
    assert.equal(asWritten(CAPTURED.takenOverAsV1), 'spec.hosts.0: wildcards are not allowed');
  });

  it('follows the manager that wrote the invalid field, not a later one that wrote another', () => {
    assert.equal(
      asWritten(CAPTURED.portAppliedAsV1Later),
      `spec.dnsNames.0: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
  });

  it('is in the storage version when the version written is unknown or cannot say', () => {
    const entry = (apiVersion: string) => [{ ...CAPTURED.appliedAsV1alpha1[1], apiVersion }];
    const inStorage = 'spec.hosts.0: wildcards are not allowed';
    // a version this release does not define (a newer release's, or a forged entry)
    assert.equal(asWritten(entry('probe.kubebus.dev/v9')), inStorage);
    assert.equal(asWritten(entry('other.example/v1alpha1')), inStorage);
    // a version of its own with anything after it: never printed, never taken for that version
    assert.equal(
      asWritten(entry(`${V1ALPHA1}/\u001b[31m visit https://evil.example to fix`)),
      inStorage,
    );
    assert.equal(asWritten([]), inStorage);
    // a conversion that throws, and a version whose schema accepts what the storage one refuses
    const object = cert(['*.example.com']);
    const broken = defineResource({
      ...basics,
      versions,
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { hosts: spec.dnsNames, port: spec.port } }),
          fromStorage: () => {
            throw new Error('no way back');
          },
        },
      },
    });
    const lenient = defineResource({
      ...basics,
      versions: {
        ...versions,
        v1alpha1: { ...versions.v1alpha1, spec: z.object({ dnsNames: z.array(z.string()) }) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { hosts: spec.dnsNames, port: 443 } }),
          fromStorage: ({ spec }) => ({ spec: { dnsNames: spec.hosts } }),
        },
      },
    });
    const writers = specWriters(CAPTURED.appliedAsV1alpha1, OURS);
    assert.equal(describeAsWritten(broken, object, issuesOf(object), writers), inStorage);
    assert.equal(describeAsWritten(lenient, object, issuesOf(object), writers), inStorage);
  });

  it('checks each version once however many entries name it', () => {
    let conversions = 0;
    const counted = defineResource({
      ...basics,
      versions,
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { hosts: spec.dnsNames, port: spec.port } }),
          fromStorage: ({ spec }) => {
            conversions++;
            return { spec: { dnsNames: spec.hosts, port: spec.port } };
          },
        },
      },
    });
    const [, applied] = CAPTURED.appliedAsV1alpha1;
    // forged by the thousand: none owns the invalid field, so every one is looked at
    const forged = Array.from({ length: 1_000 }, (_, i) => ({
      ...applied,
      manager: `m${String(i)}`,
      fieldsV1: { 'f:spec': { 'f:port': {} } },
    }));
    const object = cert(['*.example.com']);
    const message = describeAsWritten(counted, object, issuesOf(object), specWriters(forged, OURS));
    assert.match(message, /\(as written in probe\.kubebus\.dev\/v1alpha1\)$/);
    assert.equal(conversions, 1);
  });
});

describe('describing an invalid spec', () => {
  const invalid = (overrides: Partial<InvalidSpec>): InvalidSpec => {
    const object = overrides.object ?? cert(['*.example.com']);
    return {
      resource: Cert,
      object,
      issues: issuesOf(object),
      read: never,
      ours: OURS,
      log: silent,
      ...overrides,
    };
  };

  it('asks the apiserver nothing for a resource in one version', async () => {
    const Single = defineResource({
      ...basics,
      version: 'v1',
      spec: versions.v1.spec,
      status: versions.v1.status,
    });
    assert.equal(
      await describeInvalidSpec(invalid({ resource: Single })),
      'spec.hosts.0: wildcards are not allowed',
    );
  });

  it("reads the object's managedFields, which the bus does not record", async () => {
    let reads = 0;
    const read = () => {
      reads++;
      return Promise.resolve(
        cert(['*.example.com'], { managedFields: CAPTURED.appliedAsV1alpha1 }),
      );
    };
    assert.equal(
      await describeInvalidSpec(invalid({ read })),
      `spec.dnsNames.0: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
    assert.equal(reads, 1);
  });

  it('uses the managedFields of an object read from the apiserver already', async () => {
    const object = cert(['*.example.com'], { managedFields: CAPTURED.createdAsV1alpha1 });
    assert.equal(
      await describeInvalidSpec(invalid({ object })),
      `spec.dnsNames.0: wildcards are not allowed (as written in ${V1ALPHA1})`,
    );
  });

  it("names the storage version's fields when the object read is of another generation, gone, or not read", async () => {
    const inStorage = 'spec.hosts.0: wildcards are not allowed';
    const newer = cert(['*.example.com'], {
      generation: 3,
      managedFields: CAPTURED.appliedAsV1alpha1,
    });
    assert.equal(
      await describeInvalidSpec(invalid({ read: () => Promise.resolve(newer) })),
      inStorage,
    );
    assert.equal(
      await describeInvalidSpec(invalid({ read: () => Promise.resolve(undefined) })),
      inStorage,
    );
    const warned: unknown[] = [];
    const log = {
      warn: (fields: unknown) => {
        warned.push(fields);
      },
    };
    assert.equal(await describeInvalidSpec(invalid({ log })), inStorage);
    assert.equal(warned.length, 1);
  });
});
