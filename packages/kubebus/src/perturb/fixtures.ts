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
    // the operator's kind in its group (any version of it); a same-named kind of another group is not
    if (kind === undefined || (kind === primary.kind && groupOf(apiVersion) === primary.group)) {
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
    fixtures.push(asApplied(document as Fixture));
  }
  return { samples, fixtures };
}

/** The group of an apiVersion (undefined: none given, taken for the operator's). */
function groupOf(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** What the apiserver set on an object copied from `kubectl get -o yaml`, which an apply refuses. */
const SERVER_SET = ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation'];

function asApplied(fixture: Fixture): Fixture {
  const { status: _status, ...rest } = fixture as Fixture & { status?: unknown };
  const metadata = Object.fromEntries(
    Object.entries(fixture.metadata).filter(([field]) => !SERVER_SET.includes(field)),
  ) as unknown as Fixture['metadata'];
  return { ...rest, metadata };
}
