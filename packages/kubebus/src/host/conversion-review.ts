// The answer to an apiextensions.k8s.io/v1 ConversionReview, for the
// resources this process defines: each object goes to the storage version
// (the hub) and from it to the desired version through the definition's pure
// functions. A conversion that throws, an unknown version or kind answers
// Failure with a readable message: the apiserver shows it to whoever read the
// object; the process goes on.
import { z } from 'zod';
import type {
  Convertible,
  CustomResource,
  ObjectMeta,
  ServedVersion,
} from '@kubebus/shared/definition';

const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

const ConvertedObject = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string().optional(), namespace: z.string().optional() }),
  spec: z.unknown().optional(),
  status: z.unknown().optional(),
});

/** What the edge accepts; anything else is refused before a conversion runs. */
export const ConversionReviewRequest = z.object({
  apiVersion: z.literal(REVIEW_API_VERSION, {
    message: `expected apiVersion ${REVIEW_API_VERSION}`,
  }),
  kind: z.literal('ConversionReview', { message: 'expected kind ConversionReview' }),
  request: z.object({
    uid: z.string().min(1),
    desiredAPIVersion: z.string().min(1),
    objects: z.array(ConvertedObject),
  }),
});

type SentObject = z.output<typeof ConvertedObject>;

export interface ConversionReviewResponse {
  readonly apiVersion: typeof REVIEW_API_VERSION;
  readonly kind: 'ConversionReview';
  readonly response: {
    readonly uid: string;
    readonly convertedObjects: readonly unknown[];
    readonly result:
      { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
  };
}

/** A review that could not be read at all: no uid to answer to. */
export interface UnreadableReview {
  readonly unreadable: string;
}

class ConversionFailure extends Error {}

function versionNamed(resource: CustomResource, apiVersion: string): ServedVersion {
  const [group, name] = apiVersion.split('/');
  const version = resource.versions.find((known) => known.name === name);
  if (group !== resource.group || version === undefined)
    throw new ConversionFailure(
      `${apiVersion} is not a version of ${resource.kind} (${resource.versions.map((v) => `${resource.group}/${v.name}`).join(', ')})`,
    );
  return version;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function convertOne(
  resource: CustomResource,
  object: SentObject,
  desired: ServedVersion,
  desiredApiVersion: string,
): unknown {
  const from = versionNamed(resource, object.apiVersion);
  if (object.kind !== resource.kind)
    throw new ConversionFailure(`kind ${object.kind} is not ${resource.kind}`);
  if (from.name === desired.name) return object;
  const status = record(object.status);
  let current: Convertible<unknown, unknown> = {
    metadata: object.metadata as unknown as ObjectMeta,
    spec: object.spec ?? {},
    status: status,
  };
  let annotations: Record<string, string> = {};
  let ownStatus: unknown = object.status === undefined ? undefined : status;
  const step = (direction: 'toStorage' | 'fromStorage', spoke: ServedVersion) => {
    const conversion = spoke.conversion;
    if (conversion === undefined) throw new ConversionFailure(`${spoke.name} has no conversion`);
    let out;
    try {
      out = conversion[direction](current);
    } catch (error) {
      const name = object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`;
      throw new ConversionFailure(
        `converting ${resource.kind} ${name}${object.metadata.name ?? ''} ${direction === 'toStorage' ? `from ${spoke.name} to the storage version` : `from the storage version to ${spoke.name}`} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    annotations = { ...annotations, ...out.annotations };
    if (out.status !== undefined) ownStatus = out.status;
    current = {
      metadata: current.metadata,
      spec: out.spec,
      status: record(out.status),
    };
  };
  if (!from.storage) step('toStorage', from);
  if (!desired.storage) step('fromStorage', desired);
  const runtime = {
    ...(status['observedGeneration'] === undefined
      ? {}
      : { observedGeneration: status['observedGeneration'] }),
    ...(status['conditions'] === undefined ? {} : { conditions: status['conditions'] }),
  };
  const withAnnotations =
    Object.keys(annotations).length === 0
      ? object.metadata
      : {
          ...object.metadata,
          annotations: { ...record(object.metadata['annotations']), ...annotations },
        };
  return {
    ...object,
    apiVersion: desiredApiVersion,
    metadata: withAnnotations,
    spec: current.spec,
    ...(ownStatus === undefined && Object.keys(runtime).length === 0
      ? {}
      : { status: { ...record(ownStatus), ...runtime } }),
  };
}

/** Answers a parsed-or-not review body for the resources this process defines. */
export function answerConversionReview(
  resources: readonly CustomResource[],
  body: unknown,
): ConversionReviewResponse | UnreadableReview {
  const parsed = ConversionReviewRequest.safeParse(body);
  if (!parsed.success)
    return {
      unreadable: `not a ConversionReview: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
    };
  const { uid, desiredAPIVersion, objects } = parsed.data.request;
  const answer = (
    result: ConversionReviewResponse['response']['result'],
    convertedObjects: readonly unknown[] = [],
  ): ConversionReviewResponse => ({
    apiVersion: REVIEW_API_VERSION,
    kind: 'ConversionReview',
    response: { uid, convertedObjects, result },
  });
  try {
    const group = desiredAPIVersion.split('/')[0];
    const converted = objects.map((object) => {
      const resource = resources.find(
        (known) => known.group === group && known.kind === object.kind,
      );
      if (resource === undefined)
        throw new ConversionFailure(
          `${object.kind} of ${desiredAPIVersion} is not a resource this operator defines`,
        );
      return convertOne(
        resource,
        object,
        versionNamed(resource, desiredAPIVersion),
        desiredAPIVersion,
      );
    });
    return answer({ status: 'Success' }, converted);
  } catch (error) {
    if (!(error instanceof ConversionFailure)) throw error;
    return answer({ status: 'Failure', message: error.message });
  }
}
