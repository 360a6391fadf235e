// The round-trip property of a resource's conversions, as controller-runtime
// asks of hub-and-spoke conversions (lossless both ways, annotations allowed
// to carry what a version cannot hold), run through the webhook's own answer
// so the test sees what the apiserver would get. Objects start with
// annotations already on them — unrelated ones, and stale round-trip ones
// another object left — and repeated round trips must be stable. And partial
// objects, as a server-side apply sends them (each field manager's fields
// alone), and objects whose round-trip annotations hold a value the
// conversions did not write (anyone who may edit the object may set one),
// must convert without throwing.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import {
  annotationsOf,
  convertThroughWebhook,
  roundTrip,
  type SentObject,
} from '../host/round-trip.js';
import { specArbitrary } from '../perturb/spec-arbitrary.js';
import type { ConversionCheckOptions } from '../testing-api.js';

type Sent = SentObject;

/**
 * Generated values the schema rejects in a row before the check gives up: a
 * refinement (.refine, .superRefine) the generator cannot aim at would have
 * fast-check's filter draw for ever.
 */
const REJECTED_IN_A_ROW = 1_000;

/** The generator gave up on a schema (REJECTED_IN_A_ROW): not a failing conversion. */
class UngeneratableSchema extends Error {}

/** Values the schema accepts, as the apiserver stores them (defaults applied). */
function parsedArbitrary(schema: z.ZodType, path: string): fc.Arbitrary<unknown> {
  let rejected = 0;
  return specArbitrary(schema, path)
    .map((value) => {
      const parsed = schema.safeParse(value);
      if (parsed.success) rejected = 0;
      else if (++rejected >= REJECTED_IN_A_ROW) {
        const issue = parsed.error.issues[0];
        const where = [path, ...(issue?.path ?? []).map(String)].join('.');
        throw new UngeneratableSchema(
          `checkConversions: ${where}: the schema rejected ${String(REJECTED_IN_A_ROW)} generated values in a row (${issue?.message ?? 'invalid'}): a refinement (.refine, .superRefine) values cannot be generated for. Write the rule as the field's own constraint where it can be (.regex, .min, .max, an enum), or check this version with objects of your own`,
        );
      }
      return parsed;
    })
    .filter((parsed) => parsed.success)
    .map((parsed) => parsed.data);
}

/** Annotations anyone may have written: unrelated ones a conversion must keep as they are. */
const otherAnnotations = fc.dictionary(
  fc.constantFrom('example.com/note', 'example.com/owner', 'kubectl.kubernetes.io/last-applied'),
  fc.string({ maxLength: 12 }),
  { maxKeys: 2 },
);

const sentOf =
  (resource: CustomResource, version: ServedVersion) =>
  (spec: unknown, status: unknown, annotations: Record<string, string>): Sent => ({
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

/** Whole objects of the version, spec and status as its schemas let them in. */
const plainOf = (version: ServedVersion) =>
  fc.record({
    spec: parsedArbitrary(version.spec, 'spec'),
    status: fc.option(parsedArbitrary(version.status, 'status'), { nil: undefined }),
  });

function objectsOf(resource: CustomResource, version: ServedVersion): fc.Arbitrary<Sent> {
  const sent = sentOf(resource, version);
  const plain = plainOf(version);
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
            const shown = convertThroughWebhook(resource, sent(donor.spec, donor.status, {}), to);
            stale = { ...stale, ...annotationsOf(shown) };
          } catch {
            // a donor that does not convert leaves nothing; the object itself is checked below
          }
        }
      return sent(object.spec, object.status, { ...stale, ...others });
    });
}

/**
 * A value with any of its objects' fields left out, at any depth: what a
 * server-side apply converts once the fields its applier no longer applies
 * are taken out. A list stays whole (atomic, as kubebus' CRDs declare them).
 */
function prunedOf(value: unknown): fc.Arbitrary<unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fc.constant(value);
  const entries = Object.entries(value);
  if (entries.length === 0) return fc.constant({});
  return fc
    .tuple(...entries.map(([, child]) => fc.option(prunedOf(child), { nil: undefined })))
    .map((children) =>
      Object.fromEntries(
        entries
          .map(([key], i) => [key, children[i]] as const)
          .filter(([, child]) => child !== undefined),
      ),
    );
}

function partialObjectsOf(resource: CustomResource, version: ServedVersion): fc.Arbitrary<Sent> {
  return fc
    .record({
      spec: fc.option(parsedArbitrary(version.spec, 'spec').chain(prunedOf), { nil: undefined }),
      status: fc.option(parsedArbitrary(version.status, 'status').chain(prunedOf), {
        nil: undefined,
      }),
    })
    .map(({ spec, status }) => ({
      apiVersion: `${resource.group}/${version.name}`,
      metadata: { name: 'object', namespace: 'default' },
      spec,
      ...(status === undefined ? {} : { status }),
    }));
}

/**
 * The annotation keys the conversions write, as a sample of objects of every
 * version shown in every other one has them: what a round trip keeps there.
 */
function roundTripKeys(
  resource: CustomResource,
  seed: number | undefined,
  numRuns: number,
): string[] {
  const keys = new Set<string>();
  for (const from of resource.versions) {
    const sample = fc.sample(plainOf(from), {
      numRuns: Math.min(50, numRuns),
      ...(seed === undefined ? {} : { seed }),
    });
    for (const { spec, status } of sample)
      for (const to of resource.versions.filter((known) => known.name !== from.name))
        try {
          const shown = convertThroughWebhook(
            resource,
            sentOf(resource, from)(spec, status, {}),
            to,
          );
          for (const key of Object.keys(annotationsOf(shown))) keys.add(key);
        } catch {
          // the round-trip property says what fails; here only the keys are gathered
        }
  }
  return [...keys].sort();
}

/** Objects whose round-trip annotations hold values the conversions did not write. */
function garbledObjectsOf(
  resource: CustomResource,
  version: ServedVersion,
  keys: readonly string[],
): fc.Arbitrary<Sent> {
  const value = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', '{', 'null', '[]', ':', 'F:', 'NaN', '1e999', '{"a":'),
  );
  return fc
    .record({
      object: plainOf(version),
      garbled: fc.dictionary(fc.constantFrom(...keys), value, { minKeys: 1 }),
    })
    .map(({ object, garbled }) => sentOf(resource, version)(object.spec, object.status, garbled));
}

/**
 * A round trip gives back what went in (but for the conversions' own
 * annotations), and further round trips what the first did: asserted, so
 * fast-check shrinks to the smallest object and shows the difference.
 */
function checkRoundTrip(
  resource: CustomResource,
  object: Sent,
  through: ServedVersion,
  from: ServedVersion,
) {
  const trip = roundTrip(resource, object, through, from);
  assert.deepEqual(trip.got, trip.expected);
  for (const [turn, again] of trip.again.entries())
    assert.deepEqual(again, trip.back, `round trip ${turn + 2} is not the first`);
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
  /** The property over the objects, or an Error that says what fails and why. */
  const holds = (
    objects: fc.Arbitrary<Sent>,
    check: (object: Sent) => void,
    failing: string,
  ): void => {
    try {
      fc.assert(fc.property(objects, check), parameters);
    } catch (error) {
      if (error instanceof UngeneratableSchema) throw error;
      const cause = (error as Error).cause;
      const why = cause instanceof Error ? cause.message : '';
      throw new Error(`${resource.kind} ${failing}: ${(error as Error).message}\n${why}`, {
        cause: error,
      });
    }
  };
  const roundTrip = (from: ServedVersion, through: ServedVersion) => {
    holds(
      objectsOf(resource, from),
      (object) => {
        checkRoundTrip(resource, object, through, from);
      },
      `${from.name} → ${through.name} → ${from.name} is not lossless`,
    );
  };
  const partial = (from: ServedVersion, to: ServedVersion) => {
    holds(
      partialObjectsOf(resource, from),
      (object) => {
        convertThroughWebhook(resource, object, to, false);
      },
      `${from.name} → ${to.name} throws on a partial object (a server-side apply converts an object with the fields its applier no longer applies taken out: any field may be absent; convert what is there)`,
    );
  };
  const keys = roundTripKeys(resource, options.seed, parameters.numRuns);
  const garbled = (from: ServedVersion, to: ServedVersion) => {
    if (keys.length === 0) return;
    holds(
      garbledObjectsOf(resource, from, keys),
      (object) => {
        convertThroughWebhook(resource, object, to, false);
      },
      `${from.name} → ${to.name} throws on a round-trip annotation holding a value it did not write (${keys.join(', ')}: whoever may edit the object may set it, and one stored object a conversion refuses fails every list of the kind; read a value it cannot parse as absent)`,
    );
  };
  for (const version of resource.versions.filter((known) => !known.storage)) {
    roundTrip(version, storage);
    roundTrip(storage, version);
    partial(version, storage);
    partial(storage, version);
    garbled(version, storage);
    garbled(storage, version);
  }
}
