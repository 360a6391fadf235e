import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import { answerConversionReview, type ConversionReviewResponse } from './conversion-review.js';
import { conversionProperty } from '../testing/conversion-property.js';
import { Thermostat } from '../testing/thermostat-fixture.js';

const review = (desired: string, objects: unknown[]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'r-1', desiredAPIVersion: desired, objects },
});

const thermostat = (apiVersion: string, spec: unknown, status?: unknown, annotations?: object) => ({
  apiVersion,
  kind: 'Thermostat',
  metadata: {
    name: 'hall',
    namespace: 'home',
    uid: 'u-1',
    resourceVersion: '7',
    generation: 2,
    ...(annotations === undefined ? {} : { annotations }),
  },
  spec,
  ...(status === undefined ? {} : { status }),
});

function answered(body: unknown): ConversionReviewResponse['response'] {
  const answer = answerConversionReview([Thermostat], body);
  assert.ok(!('unreadable' in answer), 'the review was read');
  return answer.response;
}

describe('the conversion webhook answer', () => {
  it('converts an old version to the storage version and keeps metadata and the runtime status', () => {
    const conditions = [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: 't' },
    ];
    const response = answered(
      review('test.kubebus.dev/v1', [
        thermostat(
          'test.kubebus.dev/v1alpha1',
          { celsius: 21 },
          { reading: 19, observedGeneration: 2, conditions },
          { keep: 'me' },
        ),
      ]),
    );
    assert.equal(response.uid, 'r-1');
    assert.deepEqual(response.result, { status: 'Success' });
    assert.deepEqual(response.convertedObjects, [
      thermostat(
        'test.kubebus.dev/v1',
        { target: { value: 21, unit: 'C' } },
        { current: 19, observedGeneration: 2, conditions },
        { keep: 'me' },
      ),
    ]);
  });

  it('keeps what the old version cannot hold in an annotation, and restores it', () => {
    const stored = thermostat('test.kubebus.dev/v1', { target: { value: 68, unit: 'F' } });
    const [old] = answered(review('test.kubebus.dev/v1alpha1', [stored])).convertedObjects;
    assert.deepEqual(old, {
      ...thermostat('test.kubebus.dev/v1alpha1', { celsius: 20 }, undefined, {
        'thermostats.test.kubebus.dev/unit': 'F:68',
      }),
    });
    const [back] = answered(review('test.kubebus.dev/v1', [old])).convertedObjects;
    assert.deepEqual((back as { spec: unknown }).spec, stored.spec);
    // restored: the annotation goes (null deletes), other annotations stay
    assert.deepEqual(back, { ...stored, metadata: { ...stored.metadata, annotations: {} } });
    const noted = thermostat('test.kubebus.dev/v1alpha1', { celsius: 5 }, undefined, {
      'thermostats.test.kubebus.dev/unit': 'F:41',
      'example.com/note': 'kept',
    });
    const [stale] = answered(review('test.kubebus.dev/v1', [noted])).convertedObjects;
    assert.deepEqual(
      stale,
      thermostat('test.kubebus.dev/v1', { target: { value: 41, unit: 'F' } }, undefined, {
        'example.com/note': 'kept',
      }),
    );
  });

  it("gives the conversion functions the version's defaults the apiserver has not applied", () => {
    const [old] = answered(
      review('test.kubebus.dev/v1alpha1', [
        thermostat('test.kubebus.dev/v1', { target: { value: 20 } }),
      ]),
    ).convertedObjects;
    assert.deepEqual((old as { spec: unknown }).spec, { celsius: 20 });
  });

  it("keeps nothing of the old version's status that the conversion did not answer", () => {
    const conditions = [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: 't' },
    ];
    const Quiet = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Thermostat',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({}), status: z.object({ reading: z.int() }) },
        v1: { spec: z.object({}), status: z.object({ current: z.int() }) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: { toStorage: () => ({ spec: {} }), fromStorage: () => ({ spec: {} }) },
      },
    });
    const answer = answerConversionReview(
      [Quiet],
      review('test.kubebus.dev/v1', [
        thermostat('test.kubebus.dev/v1alpha1', {}, { reading: 4, conditions }),
      ]),
    );
    assert.ok(!('unreadable' in answer));
    const [converted] = answer.response.convertedObjects as { status?: unknown }[];
    assert.deepEqual(converted?.status, { conditions });
  });

  it('holds the round-trip property for every version', () => {
    conversionProperty(Thermostat, { numRuns: 300 });
  });

  it('holds it for a conversion that passes the status through as it was handed', () => {
    const passing = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Thermostat',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({ celsius: z.int() }), status: z.object({ on: z.boolean() }) },
        v1: { spec: z.object({ degrees: z.int() }), status: z.object({ on: z.boolean() }) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec, status }) => ({ spec: { degrees: spec.celsius }, status }),
          fromStorage: ({ spec, status }) => ({ spec: { celsius: spec.degrees }, status }),
        },
      },
    });
    conversionProperty(passing, { numRuns: 100 });
  });

  it('finds a conversion that loses a field', () => {
    const lossy = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Thermostat',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({ celsius: z.int().min(0).max(5) }), status: z.object({}) },
        v1: {
          spec: z.object({ celsius: z.int().min(0).max(5), eco: z.boolean() }),
          status: z.object({}),
        },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { celsius: spec.celsius, eco: false } }),
          fromStorage: ({ spec }) => ({ spec: { celsius: spec.celsius } }),
        },
      },
    });
    assert.throws(() => {
      conversionProperty(lossy, { numRuns: 100 });
    }, /v1 → v1alpha1 → v1/);
  });

  it('finds a conversion that throws on a partial object, as a server-side apply sends', () => {
    const strict = defineResource({
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
          // lossless on whole objects; a pruned one has no dimensions
          // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
          fromStorage: ({ spec }) => ({ spec: { size: spec.dimensions!.size } }),
        },
      },
    });
    assert.throws(() => {
      conversionProperty(strict, { numRuns: 100 });
    }, /Box v1 → v1alpha1 throws on a partial object/);
  });

  it('finds a conversion that throws on a round-trip annotation it did not write', () => {
    const KEPT = 'boxes.test.kubebus.dev/kept';
    const trusting = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Box',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({ size: z.int() }), status: z.object({}) },
        v1: { spec: z.object({ size: z.int(), colour: z.string() }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          // lossless on what it wrote itself: the colour kept as JSON, read back with JSON.parse
          toStorage: ({ metadata, spec }) => {
            const kept = metadata.annotations?.[KEPT];
            const { colour } =
              kept === undefined ? { colour: 'grey' } : (JSON.parse(kept) as { colour: string });
            return { spec: { size: spec.size, colour }, annotations: { [KEPT]: null } };
          },
          fromStorage: ({ spec }) => ({
            spec: { size: spec.size },
            annotations: { [KEPT]: JSON.stringify({ colour: spec.colour }) },
          }),
        },
      },
    });
    assert.throws(() => {
      conversionProperty(trusting, { numRuns: 100 });
    }, /Box v1alpha1 → v1 throws on a round-trip annotation holding a value it did not write \(boxes\.test\.kubebus\.dev\/kept: /);
  });

  it('gives up, naming the field, on a refinement no generated value meets', () => {
    const cron = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Backup',
      scope: 'Namespaced',
      versions: {
        v1alpha1: {
          spec: z.object({
            schedule: z.string().refine((s) => s.trim().split(/\s+/).length === 5, 'five fields'),
          }),
          status: z.object({}),
        },
        v1: { spec: z.object({ schedule: z.string() }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec }),
          fromStorage: ({ spec }) => ({ spec }),
        },
      },
    });
    // fast-check's filter drew for ever here (a newcomer's test ran 891 s to its timeout)
    assert.throws(() => {
      conversionProperty(cron, { numRuns: 5 });
    }, /^Error: checkConversions: spec\.schedule: the schema rejected 1000 generated values in a row \(five fields\)/);
  });

  it('answers a conversion that throws with Failure and a message naming the object', () => {
    const broken = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Thermostat',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({ celsius: z.int() }), status: z.object({}) },
        v1: { spec: z.object({ celsius: z.int() }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: () => {
            throw new Error('celsius is required');
          },
          fromStorage: ({ spec }) => ({ spec }),
        },
      },
    });
    const answer = answerConversionReview(
      [broken],
      review('test.kubebus.dev/v1', [thermostat('test.kubebus.dev/v1alpha1', {})]),
    );
    assert.ok(!('unreadable' in answer));
    assert.deepEqual(answer.response.convertedObjects, []);
    assert.deepEqual(answer.response.result, {
      status: 'Failure',
      message:
        'converting Thermostat home/hall from v1alpha1 to the storage version failed: celsius is required',
    });
  });

  it('answers a conversion whose answer is not an object (or has bad annotations) with Failure', () => {
    for (const [answer, text] of [
      [undefined, /answered undefined, not an object/],
      [null, /answered null, not an object/],
      ['v1', /answered string, not an object/],
      [{ spec: {}, status: 3 }, /a status that is not an object/],
      [{ spec: {}, annotations: [] }, /annotations that are not an object/],
      [{ spec: {}, annotations: { a: 1 } }, /annotation a that is not a string/],
    ] as const) {
      const odd = defineResource({
        group: 'test.kubebus.dev',
        kind: 'Thermostat',
        scope: 'Namespaced',
        versions: {
          v1alpha1: { spec: z.object({ celsius: z.int() }), status: z.object({}) },
          v1: { spec: z.object({ celsius: z.int() }), status: z.object({}) },
        },
        storage: 'v1',
        convert: {
          v1alpha1: {
            // what plain JavaScript (or a cast) can answer
            toStorage: () => answer as unknown as { spec: { celsius: number } },
            fromStorage: ({ spec }) => ({ spec }),
          },
        },
      });
      const result = answerConversionReview(
        [odd],
        review('test.kubebus.dev/v1', [thermostat('test.kubebus.dev/v1alpha1', { celsius: 1 })]),
      );
      assert.ok(!('unreadable' in result));
      assert.equal(result.response.result.status, 'Failure');
      assert.match('message' in result.response.result ? result.response.result.message : '', text);
    }
  });

  it('refuses an unknown version, group or kind with Failure', () => {
    for (const [desired, object, text] of [
      [
        'test.kubebus.dev/v2',
        thermostat('test.kubebus.dev/v1', {}),
        /v2 is not a version of Thermostat/,
      ],
      [
        'other.dev/v1',
        thermostat('test.kubebus.dev/v1', {}),
        /not a resource this operator defines/,
      ],
      ['test.kubebus.dev/v1', { ...thermostat('test.kubebus.dev/v1', {}), kind: 'Gizmo' }, /Gizmo/],
      ['test.kubebus.dev/v1', thermostat('test.kubebus.dev/v9', {}), /v9 is not a version/],
    ] as const) {
      const result = answered(review(desired, [object])).result;
      assert.equal(result.status, 'Failure');
      assert.match('message' in result ? result.message : '', text);
    }
  });

  it('does not read what is not a ConversionReview', () => {
    for (const body of [
      null,
      'text',
      { ...review('test.kubebus.dev/v1', []), apiVersion: 'apiextensions.k8s.io/v1beta1' },
      { ...review('test.kubebus.dev/v1', []), kind: 'AdmissionReview' },
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: '' } },
    ]) {
      const answer = answerConversionReview([Thermostat], body);
      assert.ok('unreadable' in answer, JSON.stringify(body));
      assert.match(answer.unreadable, /^not a ConversionReview: /);
      assert.ok(!answer.unreadable.includes('\n'));
    }
  });
});
