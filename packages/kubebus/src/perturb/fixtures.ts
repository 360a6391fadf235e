// What the operator's objects refer to (a Secret with a password, a ConfigMap
// of settings): documents of other kinds among the samples, made in each
// run's place before the workload's first step, so the reference and every
// perturbed run start from the same world. They are the user's, not the
// operator's: the observed state leaves them out (it compares what the
// operator made).
import { apiVersionOf, type CustomResource } from '@kubebus/shared/definition';
import type { Sample } from './report.js';
import { WorkloadError } from './workload-error.js';

export interface Fixture {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

/** The samples of the operator's kind (or specs alone), and the fixtures beside them. */
export function splitSamples(
  primary: CustomResource,
  documents: readonly Sample[],
): { readonly samples: Sample[]; readonly fixtures: Fixture[] } {
  const samples: Sample[] = [];
  const fixtures: Fixture[] = [];
  for (const [index, document] of documents.entries()) {
    const { kind, apiVersion, metadata } = document as {
      kind?: unknown;
      apiVersion?: unknown;
      metadata?: { name?: unknown };
    };
    if (kind === undefined || kind === primary.kind) {
      samples.push(document);
      continue;
    }
    if (
      typeof kind !== 'string' ||
      typeof apiVersion !== 'string' ||
      typeof metadata?.name !== 'string'
    )
      throw new WorkloadError(
        `sample ${index + 1} is a ${typeof kind === 'string' ? kind : JSON.stringify(kind)}, not a ${primary.kind} (${apiVersionOf(primary)}): to create it before the workload, give its apiVersion and metadata.name`,
      );
    fixtures.push(document as Fixture);
  }
  return { samples, fixtures };
}
