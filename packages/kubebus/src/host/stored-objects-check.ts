// Whether a release's conversions and schemas take every object the cluster
// stores, before its CRD is applied: one stored object a conversion refuses
// fails every list of the kind, the watcher's too, and objects stored in a
// version the release no longer defines can no longer be read at all. Each
// object is listed in a version it is stored in (as stored, or as the
// installed conversion shows it there), checked against the release's schema
// of that version, and converted by the release to each of its other
// versions and back (host/round-trip.ts), as the apiserver will convert it.
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import { collectionPath } from '@kubebus/shared/kube';
import { ConversionProblem, roundTrip, roundTripLoss, type SentObject } from './round-trip.js';
import {
  CRDS,
  MigrationRefused,
  pageOf,
  refOf,
  type Crd,
  type MigrationClient,
} from './storage-migration.js';

export interface StoredObjectsReport {
  /** the CRD's status.storedVersions */
  readonly storedVersions: readonly string[];
  /** objects checked, by the version they were listed in */
  readonly checked: Readonly<Record<string, number>>;
  /** one line each: the object (or version) and what is wrong */
  readonly problems: readonly string[];
}

interface Listed extends SentObject {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

function issuesOf(version: ServedVersion, object: SentObject): string | undefined {
  const parsed = version.spec.safeParse(object.spec ?? {});
  if (parsed.success) return undefined;
  return parsed.error.issues
    .map((issue) => `spec.${issue.path.join('.')}: ${issue.message}`)
    .join('; ');
}

/** What is wrong with one object of `version` under the release; undefined when nothing. */
export function storedObjectProblem(
  resource: CustomResource,
  object: SentObject,
  version: ServedVersion,
): string | undefined {
  const issues = issuesOf(version, object);
  if (issues !== undefined)
    return `does not pass this release's ${version.name} schema (${issues})${version.storage ? ': its reconciles will say InvalidSpec' : ''}`;
  for (const other of resource.versions.filter((known) => known.name !== version.name)) {
    try {
      const loss = roundTripLoss(roundTrip(resource, object, other, version));
      if (loss !== undefined) return `${version.name} → ${other.name} → ${version.name}: ${loss}`;
    } catch (error) {
      if (!(error instanceof ConversionProblem)) throw error;
      return `${version.name} → ${other.name}: ${error.message}`;
    }
  }
  return undefined;
}

export async function checkStoredObjects(
  kube: MigrationClient,
  resource: CustomResource,
): Promise<StoredObjectsReport> {
  const crd = await kube.getIfExists<Crd>(`${CRDS}/${resource.plural}.${resource.group}`);
  if (crd === undefined)
    throw new MigrationRefused(
      `the CRD ${resource.plural}.${resource.group} is not installed: nothing is stored yet`,
    );
  const storedVersions = crd.status?.storedVersions ?? [];
  const installedStorage = crd.spec.versions.find((known) => known.storage)?.name;
  const served = (name: string) =>
    crd.spec.versions.some((known) => known.name === name && known.served !== false);
  const problems: string[] = [];
  const checked: Record<string, number> = {};
  const listIn = new Set<string>();
  for (const stored of storedVersions) {
    if (!resource.versions.some((known) => known.name === stored)) {
      problems.push(
        `objects may be stored in ${stored}, which this release does not define: they could no longer be read. Keep ${stored} in the release (served: false), or migrate them first (kubebus storage migrate with the release installed now)`,
      );
      continue;
    }
    // a version the installed CRD no longer serves is read through its storage version
    const through = served(stored) ? stored : installedStorage;
    if (through !== undefined && resource.versions.some((known) => known.name === through))
      listIn.add(through);
  }
  for (const name of listIn) {
    const version = resource.versions.find((known) => known.name === name);
    if (version === undefined) continue;
    const path = collectionPath(refOf(resource, name));
    let next: string | undefined;
    let count = 0;
    do {
      const page = await pageOf(kube, path, next);
      // the apiserver's objects of the kind: apiVersion, metadata, spec, status
      for (const object of page.items as unknown as Listed[]) {
        count++;
        const problem = storedObjectProblem(resource, object, version);
        if (problem === undefined) continue;
        const { name: objectName, namespace } = object.metadata;
        problems.push(
          `${namespace === undefined ? '' : `${namespace}/`}${objectName} (read as ${name}): ${problem}`,
        );
      }
      next = page.metadata.continue === '' ? undefined : page.metadata.continue;
    } while (next !== undefined);
    checked[name] = count;
  }
  return { storedVersions, checked, problems };
}
