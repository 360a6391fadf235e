// The round-trip property of a resource's conversions, as controller-runtime
// asks of hub-and-spoke conversions (lossless both ways, annotations allowed
// to carry what a version cannot hold), run through the webhook's own answer
// so the test sees what the apiserver would get. Objects start with
// annotations already on them — unrelated ones, and stale round-trip ones
// another object left — and repeated round trips must be stable.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import { answerConversionReview } from '../host/conversion-review.js';
import { specArbitrary } from '../perturb/spec-arbitrary.js';
import type { ConversionCheckOptions } from '../testing-api.js';

interface Sent {
  readonly apiVersion: string;
  readonly metadata: Record<string, unknown>;
  readonly spec: unknown;
  readonly status?: unknown;
}

/** Values the schema accepts, as the apiserver stores them (defaults applied). */
function parsedArbitrary(schema: z.ZodType, path: string): fc.Arbitrary<unknown> {
  return specArbitrary(schema, path)
    .map((value) => schema.safeParse(value))
    .filter((parsed) => parsed.success)
    .map((parsed) => parsed.data);
}

/** Annotations anyone may have written: unrelated ones a conversion must keep as they are. */
const otherAnnotations = fc.dictionary(
  fc.constantFrom('example.com/note', 'example.com/owner', 'kubectl.kubernetes.io/last-applied'),
  fc.string({ maxLength: 12 }),
  { maxKeys: 2 },
);

function objectsOf(resource: CustomResource, version: ServedVersion): fc.Arbitrary<Sent> {
  const sent = (spec: unknown, status: unknown, annotations: Record<string, string>): Sent => ({
    apiVersion: `${resource.group}/${version.name}`,
    metadata: {
      name: 'object',
      namespace: 'default',
      uid: 'uid-1',
      resourceVersion: '1',
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    },
    spec,
    ...(status === undefined ? {} : { status }),
  });
  const plain = fc.record({
    spec: parsedArbitrary(version.spec, 'spec'),
    status: fc.option(parsedArbitrary(version.status, 'status'), { nil: undefined }),
  });
  return fc
    .record({
      object: plain,
      // what another object of this version left when shown in every other version: stale
      // round-trip annotations, as a client that read it there and wrote it back keeps them
      donor: fc.option(plain, { nil: undefined }),
      others: otherAnnotations,
    })
    .map(({ object, donor, others }) => {
      let stale: Record<string, string> = {};
      if (donor !== undefined)
        for (const to of resource.versions.filter((known) => known.name !== version.name)) {
          try {
            const shown = convert(resource, sent(donor.spec, donor.status, {}), to);
            stale = { ...stale, ...annotationsOf(shown) };
          } catch {
            // a donor that does not convert leaves nothing; the object itself is checked below
          }
        }
      return sent(object.spec, object.status, { ...stale, ...others });
    });
}

function annotationsOf(object: Sent): Record<string, string> {
  return (object.metadata['annotations'] ?? {}) as Record<string, string>;
}

function convert(resource: CustomResource, object: Sent, to: ServedVersion): Sent {
  const answer = answerConversionReview([resource], {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: {
      uid: 'review',
      desiredAPIVersion: `${resource.group}/${to.name}`,
      objects: [{ ...object, kind: resource.kind }],
    },
  });
  if ('unreadable' in answer) throw new Error(answer.unreadable);
  const { result, convertedObjects } = answer.response;
  if (result.status === 'Failure') throw new Error(result.message);
  const [converted] = convertedObjects as Sent[];
  if (converted === undefined) throw new Error('the conversion answered no object');
  const to_ = to.spec.safeParse(converted.spec);
  if (!to_.success)
    throw new Error(`the ${to.name} spec does not pass its schema: ${to_.error.message}`);
  return converted;
}

/** spec, status and annotations as the object had them: what a round trip must give back */
function content(object: Sent) {
  return { spec: object.spec, status: object.status, annotations: annotationsOf(object) };
}

/**
 * A round trip gives back the spec and status that went in, and the
 * annotations but for the conversions' own (those a step set or deleted: a
 * round-trip annotation is deleted once restored); a second round trip gives
 * back what the first did, annotations and all: a stale one restores nothing.
 */
function checkRoundTrip(
  resource: CustomResource,
  object: Sent,
  through: ServedVersion,
  from: ServedVersion,
) {
  const there = convert(resource, object, through);
  const back = convert(resource, there, from);
  const own = new Set<string>();
  for (const [before, after] of [
    [object, there],
    [there, back],
  ] as const) {
    const a = annotationsOf(before);
    const b = annotationsOf(after);
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
      if (a[key] !== b[key]) own.add(key);
  }
  const others = (annotations: Record<string, string>) =>
    Object.fromEntries(Object.entries(annotations).filter(([key]) => !own.has(key)));
  const expected = content(object);
  const got = content(back);
  assert.deepEqual(
    { ...got, annotations: others(got.annotations) },
    { ...expected, annotations: others(expected.annotations) },
  );
  let again = back;
  for (let turn = 0; turn < 2; turn++) {
    again = convert(resource, convert(resource, again, through), from);
    assert.deepEqual(content(again), content(back), `round trip ${turn + 2} is not the first`);
  }
}

export function conversionProperty(
  resource: CustomResource,
  options: ConversionCheckOptions = {},
): void {
  const storage = resource.versions.find((version) => version.storage);
  assert.ok(storage !== undefined, `${resource.kind} has no storage version`);
  const parameters = {
    numRuns: options.numRuns ?? 200,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  };
  const roundTrip = (from: ServedVersion, through: ServedVersion) => {
    const path = `${from.name} → ${through.name} → ${from.name}`;
    try {
      fc.assert(
        fc.property(objectsOf(resource, from), (object) => {
          checkRoundTrip(resource, object, through, from);
        }),
        parameters,
      );
    } catch (error) {
      const cause = (error as Error).cause;
      const why = cause instanceof Error ? cause.message : '';
      throw new Error(
        `${resource.kind} ${path} is not lossless: ${(error as Error).message}\n${why}`,
        { cause: error },
      );
    }
  };
  for (const version of resource.versions.filter((known) => !known.storage)) {
    roundTrip(version, storage);
    roundTrip(storage, version);
  }
}
