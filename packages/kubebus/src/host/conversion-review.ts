// The answer to an apiextensions.k8s.io/v1 ConversionReview, for the
// resources this process defines: each object goes to the storage version
// (the hub) and from it to the desired version through the definition's pure
// functions. A conversion that throws, an unknown version or kind answers
// Failure with a readable message: the apiserver shows it to whoever read the
// object; the process goes on.
import { z } from 'zod';
import {
  ConversionError,
  convertObject,
  versionNamed,
  type CustomResource,
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
        throw new ConversionError(
          `${object.kind} of ${desiredAPIVersion} is not a resource this operator defines`,
        );
      return convertObject(resource, object, versionNamed(resource, desiredAPIVersion));
    });
    return answer({ status: 'Success' }, converted);
  } catch (error) {
    if (!(error instanceof ConversionError)) throw error;
    return answer({ status: 'Failure', message: error.message });
  }
}
