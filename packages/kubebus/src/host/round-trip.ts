// One object through a resource's conversions, as the webhook answers them:
// what the test kit's round-trip property asserts over generated objects and
// `kubebus storage check` over the cluster's stored ones. A round trip gives
// back the spec and status that went in, and the annotations but for the
// conversions' own (those a step set or deleted); a second round trip gives
// back what the first did.
import { isDeepStrictEqual } from 'node:util';
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import { answerConversionReview } from './conversion-review.js';

/** An object as the apiserver sends it to the webhook. */
export interface SentObject {
  readonly apiVersion: string;
  readonly metadata: Record<string, unknown>;
  readonly spec?: unknown;
  readonly status?: unknown;
}

export class ConversionProblem extends Error {
  override readonly name = 'ConversionProblem';
}

export function annotationsOf(object: SentObject): Record<string, string> {
  return (object.metadata['annotations'] ?? {}) as Record<string, string>;
}

/**
 * The object in version `to`, through the webhook's own answer; with
 * `validate`, its spec must pass that version's schema. Throws a
 * ConversionProblem saying why not.
 */
export function convertThroughWebhook(
  resource: CustomResource,
  object: SentObject,
  to: ServedVersion,
  validate = true,
): SentObject {
  const answer = answerConversionReview([resource], {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: {
      uid: 'review',
      desiredAPIVersion: `${resource.group}/${to.name}`,
      objects: [{ ...object, kind: resource.kind }],
    },
  });
  if ('unreadable' in answer) throw new ConversionProblem(answer.unreadable);
  const { result, convertedObjects } = answer.response;
  if (result.status === 'Failure') throw new ConversionProblem(result.message);
  const [converted] = convertedObjects as SentObject[];
  if (converted === undefined) throw new ConversionProblem('the conversion answered no object');
  if (!validate) return converted;
  const parsed = to.spec.safeParse(converted.spec);
  if (!parsed.success)
    throw new ConversionProblem(
      `the ${to.name} spec does not pass its schema: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'spec'}: ${issue.message}`).join('; ')}`,
    );
  return converted;
}

/** spec, status and annotations: what a round trip compares */
export interface Content {
  readonly spec: unknown;
  readonly status: unknown;
  readonly annotations: Record<string, string>;
}

function content(object: SentObject, leaveOut: ReadonlySet<string> = new Set()): Content {
  return {
    spec: object.spec,
    status: object.status,
    annotations: Object.fromEntries(
      Object.entries(annotationsOf(object)).filter(([key]) => !leaveOut.has(key)),
    ),
  };
}

/** The first path at which two JSON values differ, as `spec.endpoint.port`. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (isDeepStrictEqual(a, b)) return undefined;
  const isRecord = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === 'object';
  if (!isRecord(a) || !isRecord(b) || Array.isArray(a) !== Array.isArray(b)) return path || '.';
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const at = Array.isArray(a) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
    const found = firstDifference(a[key], b[key], at);
    if (found !== undefined) return found;
  }
  return path || '.';
}

export interface RoundTrip {
  /** what went in, and what came back, with the conversions' own annotations left out of both */
  readonly expected: Content;
  readonly got: Content;
  /** what came back, whole, and what further round trips gave: each must equal it */
  readonly back: Content;
  readonly again: readonly Content[];
}

/**
 * `from` → `through` → `from`, twice more; throws a ConversionProblem where a
 * step fails. With `validate`, each step's spec must pass its version's
 * schema (what a valid object must convert to).
 */
export function roundTrip(
  resource: CustomResource,
  object: SentObject,
  through: ServedVersion,
  from: ServedVersion,
  validate = true,
): RoundTrip {
  const there = convertThroughWebhook(resource, object, through, validate);
  const back = convertThroughWebhook(resource, there, from, validate);
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
  const again: Content[] = [];
  let next = back;
  for (let turn = 0; turn < 2; turn++) {
    next = convertThroughWebhook(
      resource,
      convertThroughWebhook(resource, next, through, validate),
      from,
      validate,
    );
    again.push(content(next));
  }
  return { expected: content(object, own), got: content(back, own), back: content(back), again };
}

/** What a round trip lost or changed, in one line; undefined when nothing. */
export function roundTripLoss(trip: RoundTrip): string | undefined {
  const lost = firstDifference(trip.expected, trip.got);
  if (lost !== undefined) return `the round trip changes ${lost}`;
  for (const [turn, later] of trip.again.entries()) {
    const changed = firstDifference(trip.back, later);
    if (changed !== undefined) return `round trip ${turn + 2} changes ${changed}`;
  }
  return undefined;
}
