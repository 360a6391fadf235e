// Whether a release's conversions and schemas take every object the cluster
// stores, before its CRD is applied: one stored object a conversion refuses
// fails every list of the kind, the watcher's too, and objects stored in a
// version the release no longer defines can no longer be read at all. Each
// object is listed in a version it is stored in (as stored, or as the
// installed conversion shows it there), checked against the release's schema
// of that version, and converted by the release to each of its other
// versions and back (host/round-trip.ts), as the apiserver will convert it.
import type { CustomResource, ServedVersion } from '@kubebus/shared/definition';
import { collectionPath, isKubeApiError } from '@kubebus/shared/kube';
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
  /** objects checked (each once, whatever it was listed in), and the versions they were listed in */
  readonly objects: number;
  readonly listedIn: readonly string[];
  /** one line each: an object (or a version) the release would refuse or lose a field of */
  readonly problems: readonly string[];
  /** one line each: what the release's schemas refuse (those objects are InvalidSpec), and what was not checked */
  readonly warnings: readonly string[];
}

interface Listed extends SentObject {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly uid?: string };
}

function issuesOf(version: ServedVersion, object: SentObject): string | undefined {
  const parsed = version.spec.safeParse(object.spec ?? {});
  if (parsed.success) return undefined;
  return parsed.error.issues
    .map((issue) => `${['spec', ...issue.path].join('.')}: ${issue.message}`)
    .join('; ');
}

export interface StoredObjectFindings {
  /** a conversion that refuses it, or a round trip that loses a field: fails the check */
  readonly problem?: string;
  /** the release's schema of the version refuses it (a refinement too): said, not failed */
  readonly invalid?: string;
}

/** What is wrong with one object of `version` under the release. */
export function storedObjectFindings(
  resource: CustomResource,
  object: SentObject,
  version: ServedVersion,
): StoredObjectFindings {
  const issues = issuesOf(version, object);
  const invalid =
    issues === undefined
      ? undefined
      : `does not pass this release's ${version.name} schema (${issues})${version.storage ? ': its reconciles will say InvalidSpec' : ''}`;
  // as the release reads it: with its defaults (a field it adds comes back with its default)
  const parsed = version.spec.safeParse(object.spec ?? {});
  const read = parsed.success ? { ...object, spec: parsed.data } : object;
  for (const other of resource.versions.filter((known) => known.name !== version.name)) {
    let problem: string | undefined;
    try {
      // an object its own schema refuses may convert to one the other's refuses: not the conversion's fault
      const loss = roundTripLoss(roundTrip(resource, read, other, version, issues === undefined));
      if (loss !== undefined)
        problem = `${version.name} → ${other.name} → ${version.name}: ${loss}`;
    } catch (error) {
      if (!(error instanceof ConversionProblem)) throw error;
      problem = `${version.name} → ${other.name}: ${error.message}`;
    }
    if (problem !== undefined) return { problem, ...(invalid === undefined ? {} : { invalid }) };
  }
  return invalid === undefined ? {} : { invalid };
}

const nameOf = (object: Listed) =>
  `${object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`}${object.metadata.name}`;

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
  const warnings: string[] = [];
  const listIn = new Set<string>();
  for (const stored of storedVersions) {
    if (!resource.versions.some((known) => known.name === stored)) {
      problems.push(
        `objects may be stored in ${stored}, which this release does not define: they could no longer be read. Keep ${stored} in the release (served: false), or migrate them first (kubebus storage migrate with the release installed now)`,
      );
      continue;
    }
    if (served(stored)) {
      listIn.add(stored);
      continue;
    }
    // the apiserver shows an object only in a served version: its stored form is not seen
    if (installedStorage !== undefined) listIn.add(installedStorage);
    warnings.push(
      `objects stored in ${stored} are read as ${installedStorage ?? 'the storage version'} (the installed CRD no longer serves ${stored}): the release's ${stored} conversion is not tried on their stored form`,
    );
  }
  // an object shows in every version listed, converted by the installed webhook where it is
  // stored in another: each is checked in each, and reported once
  const seen = new Set<string>();
  const reported = new Set<string>();
  const invalid = new Set<string>();
  for (const name of listIn) {
    const version = resource.versions.find((known) => known.name === name);
    if (version === undefined) continue;
    const path = collectionPath(refOf(resource, name));
    let next: string | undefined;
    do {
      let page;
      try {
        page = await pageOf(kube, path, next);
      } catch (error) {
        if (!isKubeApiError(error)) throw error;
        problems.push(
          `listing the objects as ${name} failed: ${error.message} (an object the installed conversion refuses fails every list: docs/errors.md, "A conversion that fails")`,
        );
        break;
      }
      // the apiserver's objects of the kind: apiVersion, metadata, spec, status
      for (const object of page.items as unknown as Listed[]) {
        const id = object.metadata.uid ?? nameOf(object);
        seen.add(id);
        const findings = storedObjectFindings(resource, object, version);
        if (findings.problem !== undefined && !reported.has(id)) {
          reported.add(id);
          problems.push(`${nameOf(object)} (read as ${name}): ${findings.problem}`);
        }
        if (findings.invalid !== undefined && !invalid.has(id)) {
          invalid.add(id);
          warnings.push(`${nameOf(object)} (read as ${name}): ${findings.invalid}`);
        }
      }
      next = page.metadata.continue === '' ? undefined : page.metadata.continue;
    } while (next !== undefined);
  }
  return { storedVersions, objects: seen.size, listedIn: [...listIn], problems, warnings };
}
