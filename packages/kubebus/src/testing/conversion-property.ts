// The round-trip property of a resource's conversions, as controller-runtime
// asks of hub-and-spoke conversions (lossless both ways, annotations allowed
// to carry what a version cannot hold), run through the webhook's own answer
// so the test sees what the apiserver would get.
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

function objectsOf(resource: CustomResource, version: ServedVersion): fc.Arbitrary<Sent> {
  return fc
    .record({
      spec: parsedArbitrary(version.spec, 'spec'),
      status: fc.option(parsedArbitrary(version.status, 'status'), { nil: undefined }),
    })
    .map(({ spec, status }) => ({
      apiVersion: `${resource.group}/${version.name}`,
      metadata: { name: 'object', namespace: 'default', uid: 'uid-1', resourceVersion: '1' },
      spec,
      ...(status === undefined ? {} : { status }),
    }));
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

/** spec and status as the object had them: what a round trip must give back */
function content(object: Sent) {
  return { spec: object.spec, status: object.status };
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
          const back = convert(resource, convert(resource, object, through), from);
          assert.deepEqual(content(back), content(object));
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
