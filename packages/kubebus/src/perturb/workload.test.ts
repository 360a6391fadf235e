import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import { inPlace, placeOf } from './place.js';
import { stepsOf, workloadOf, WorkloadError } from './workload.js';

const Thing = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Thing',
  scope: 'Namespaced',
  spec: z.object({ size: z.int().min(1).max(5), label: z.string().max(10).optional() }),
  status: z.object({}),
});

test('samples come first, then generated specs, all valid, deterministic from the seed', () => {
  const sample = { metadata: { name: 'mine' }, spec: { size: 3, label: 'x' } };
  const a = workloadOf(Thing, { seed: 5, samples: [sample] });
  assert.equal(a.name, 'mine');
  assert.deepEqual(a.specs[0], sample.spec);
  assert.ok(a.specs.length >= 3);
  for (const spec of a.specs) assert.ok(Thing.definition.spec.safeParse(spec).success);
  assert.deepEqual(workloadOf(Thing, { seed: 5, samples: [sample] }), a);
});

test('a sample its schema rejects is refused, naming the sample', () => {
  assert.throws(
    () => workloadOf(Thing, { seed: 1, samples: [{ spec: { size: 99 } }] }),
    (error: unknown) => error instanceof WorkloadError && /^sample 1 /.test(error.message),
  );
});

test('specs that refinements always reject ask for samples', () => {
  const Picky = defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind: 'Picky',
    scope: 'Namespaced',
    spec: z.object({ code: z.string() }).refine((spec) => spec.code === 'exactly this'),
    status: z.object({}),
  });
  assert.throws(
    () => workloadOf(Picky, { seed: 1 }),
    /give sample objects \(--samples file\.yaml\)/,
  );
});

test('the steps go back and forth, delete, re-create under the same name, delete', () => {
  const steps = stepsOf([{ a: 0 }, { a: 1 }, { a: 2 }]);
  assert.deepEqual(
    steps.map((step) => (step.action === 'apply' ? step.spec : 'delete')),
    [{ a: 0 }, { a: 1 }, { a: 0 }, { a: 2 }, 'delete', { a: 1 }, 'delete'],
  );
  // one spec only: no change steps
  assert.deepEqual(
    stepsOf([{}]).map((step) => step.action),
    ['apply', 'delete', 'apply', 'delete'],
  );
});

test('objects of other kinds among the samples are fixtures, not specs', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db-password' },
    stringData: { password: 'x' },
  };
  const sample = { apiVersion: 'test.kubebus.dev/v1', kind: 'Thing', spec: { size: 2 } };
  const workload = workloadOf(Thing, { seed: 1, samples: [secret, sample] });
  assert.deepEqual(workload.fixtures, [secret]);
  // copied from `kubectl get -o yaml`: what the apiserver set is left out; a same-named kind
  // of another group is a fixture too
  const copied = {
    ...secret,
    metadata: { ...secret.metadata, uid: 'u', resourceVersion: '7', managedFields: [] },
    status: {},
  };
  const other = { apiVersion: 'other.example.com/v1', kind: 'Thing', metadata: { name: 't' } };
  assert.deepEqual(workloadOf(Thing, { seed: 1, samples: [copied, other, sample] }).fixtures, [
    secret,
    other,
  ]);
  assert.deepEqual(workload.specs[0], sample.spec);
  // one that cannot be created says what it lacks
  assert.throws(
    () => workloadOf(Thing, { seed: 1, samples: [{ kind: 'ConfigMap', data: {} }] }),
    (error: unknown) =>
      error instanceof WorkloadError &&
      /sample 1 is a ConfigMap, not a Thing .*give its apiVersion and metadata\.name/.test(
        error.message,
      ),
  );
});

test("a fixture's later documents are revisions: steps of their own while the object lives", () => {
  const secret = (password: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db-password' },
    stringData: { password },
  });
  const settings = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-password' } };
  const sample = { apiVersion: 'test.kubebus.dev/v1', kind: 'Thing', spec: { size: 2 } };
  const workload = workloadOf(Thing, {
    seed: 1,
    samples: [secret('first'), settings, sample, secret('second'), secret('third')],
  });
  // the first document of each object is made before the workload; a same-named other kind is another object
  assert.deepEqual(workload.fixtures, [secret('first'), settings]);
  const whys = workload.steps.map((step) => step.why);
  const firstDelete = workload.steps.findIndex((step) => step.action === 'delete');
  assert.deepEqual(whys.slice(firstDelete - 2, firstDelete + 1), [
    'change Secret/db-password to its revision 2',
    'change Secret/db-password to its revision 3',
    'delete',
  ]);
  const revision = workload.steps[firstDelete - 1];
  assert.ok(revision?.action === 'fixture');
  assert.deepEqual(revision.fixture, secret('third'));
  // beside a namespaced object, the namespace a document names does not make it another fixture
  const elsewhere = { ...secret('second'), metadata: { name: 'db-password', namespace: 'x' } };
  assert.equal(
    workloadOf(Thing, { seed: 1, samples: [secret('first'), sample, elsewhere] }).fixtures.length,
    1,
  );
  // a revision that changes nothing would bring no change to wait for
  assert.throws(
    () => workloadOf(Thing, { seed: 1, samples: [secret('first'), sample, secret('first')] }),
    (error: unknown) =>
      error instanceof WorkloadError &&
      /^sample 3 repeats Secret\/db-password unchanged/.test(error.message),
  );
  // none: the steps are the ones without fixtures, so a replay line keeps its step numbers
  assert.deepEqual(
    workloadOf(Thing, { seed: 1, samples: [secret('first'), sample] }).steps,
    stepsOf(workload.specs),
  );
});

test("a sample's <name> is each run's own: judged as a run's name, kept as written", () => {
  const Tenant = defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind: 'Tenant',
    scope: 'Cluster',
    // a DNS label: "<name>" itself would not pass
    spec: z.object({ namespace: z.string().regex(/^[a-z0-9-]+$/) }),
    status: z.object({}),
  });
  const sample = { metadata: { name: 'acme' }, spec: { namespace: 'team-<name>' } };
  const workload = workloadOf(Tenant, { seed: 3, samples: [sample] });
  assert.deepEqual(workload.specs[0], { namespace: 'team-<name>' });
  // each run applies it with its own name in place
  assert.deepEqual(inPlace(placeOf(Tenant, 'kbt-4', 'acme'), workload.specs[0]), {
    namespace: 'team-acme-kbt-4',
  });
});
