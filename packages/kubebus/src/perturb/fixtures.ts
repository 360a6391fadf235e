// What the operator's objects refer to (a Secret with a password, a ConfigMap
// of settings): documents of other kinds among the samples, made in each
// run's place before the workload's first step, so the reference and every
// perturbed run start from the same world. A later document of the same
// object is a revision of it (a rotated password): the workload applies it as
// a step of its own (workload.ts). They are the user's, not the operator's:
// the observed state leaves them out (it compares what the operator made).
import { isDeepStrictEqual } from 'node:util';
import { apiVersionOf, type CustomResource, type Operator } from '@kubebus/shared/definition';
import type { Sample } from './report.js';
import { WorkloadError } from './workload-error.js';

export interface Fixture {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

/** A later document of a fixture: applied as a workload step of its own. */
export interface FixtureRevision {
  readonly fixture: Fixture;
  /** 2 for the fixture's second document, and so on */
  readonly revision: number;
}

/** The samples of the operator's kind (or specs alone), the fixtures beside them, and their revisions. */
export function splitSamples(
  primary: CustomResource,
  documents: readonly Sample[],
): {
  readonly samples: Sample[];
  readonly fixtures: Fixture[];
  readonly revisions: FixtureRevision[];
} {
  const samples: Sample[] = [];
  const fixtures: Fixture[] = [];
  const revisions: FixtureRevision[] = [];
  const documentsOf = new Map<string, { revision: number; document: Fixture }>();
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
    const fixture = asApplied(document as Fixture);
    // beside a namespaced object a fixture is made in the run's namespace, whatever it names
    const identity = fixtureName(
      primary.scope === 'Namespaced'
        ? { ...fixture, metadata: { name: fixture.metadata.name } }
        : fixture,
    );
    const before = documentsOf.get(identity);
    if (before !== undefined && isDeepStrictEqual(before.document, fixture))
      throw new WorkloadError(
        `sample ${index + 1} repeats ${identity} unchanged: a later document of a fixture is a revision, applied as a step, so it must change something`,
      );
    const revision = (before?.revision ?? 0) + 1;
    documentsOf.set(identity, { revision, document: fixture });
    if (revision === 1) fixtures.push(fixture);
    else revisions.push({ fixture, revision });
  }
  return { samples, fixtures, revisions };
}

/** `Kind/name` (`Kind/namespace/name` where it names one), with the group when not the core one. */
export function fixtureName(fixture: Fixture): string {
  const group = groupOf(fixture.apiVersion);
  const kind = group === '' || group === undefined ? fixture.kind : `${fixture.kind}.${group}`;
  const { name, namespace } = fixture.metadata;
  return namespace === undefined ? `${kind}/${name}` : `${kind}/${namespace}/${name}`;
}

/**
 * Whether a reconcile that read `reads` (the recording's `get Kind name`,
 * `readSecret name`) read the fixture by name. A list of its kind is left
 * out: an operator lists what it owns of a kind as often as anything else.
 */
export function readsFixture(reads: readonly string[], fixture: Fixture): boolean {
  const { kind, metadata } = fixture;
  return reads.some(
    (read) =>
      read === `get ${kind} ${metadata.name}` ||
      (kind === 'Secret' && read === `readSecret ${metadata.name}`),
  );
}

/** Whether the operator watches the fixture's kind (`watches`): its changes reconcile the objects mapped to them. */
export function watchedFixture(operator: Operator, fixture: Fixture): boolean {
  return (operator.watches ?? []).some(
    ({ resource }) =>
      resource.kind === fixture.kind && resource.group === (groupOf(fixture.apiVersion) ?? ''),
  );
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
