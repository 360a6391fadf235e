// Moves every stored object of a resource to its storage version, as
// kube-storage-version-migrator does: each object is read in the storage
// version and written back unchanged (the apiserver converts on read and
// encodes in the storage version on write; a conflict reads it again), then
// the CRD's status.storedVersions is trimmed to the storage version alone, so
// an old version can later be dropped from the CRD.
import type { CustomResource } from '@kubebus/shared/definition';
import {
  collectionPath,
  isConflict,
  isGone,
  isKubeApiError,
  isNotFound,
  objectPath,
  type KubeClient,
  type ResourceRef,
} from '@kubebus/shared/kube';

export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const PAGE = 200;
const ATTEMPTS = 5;

interface Listed {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

export interface Crd {
  readonly spec: {
    readonly versions: readonly {
      readonly name: string;
      readonly storage: boolean;
      readonly served?: boolean;
    }[];
  };
  readonly status?: {
    readonly storedVersions?: readonly string[];
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
}

/** The apiserver calls the migration makes: a list, a read, a write. */
export type MigrationClient = Pick<KubeClient, 'request' | 'getIfExists'>;

export interface MigrationReport {
  /** the versions objects were stored in before */
  readonly storedBefore: readonly string[];
  readonly rewritten: number;
  /** objects that were deleted while the migration ran */
  readonly gone: number;
}

export class MigrationRefused extends Error {
  override readonly name = 'MigrationRefused';
}

export function refOf(resource: CustomResource, version = resource.version): ResourceRef {
  return {
    group: resource.group,
    version,
    resource: resource.plural,
    namespaced: resource.scope === 'Namespaced',
  };
}

/** A page of the collection; a continue token that expired (410) goes on with the one its Status carries. */
export async function pageOf(kube: MigrationClient, path: string, next: string | undefined) {
  try {
    return await kube.request<{ items: Listed[]; metadata: { continue?: string } }>(path, {
      query: { limit: PAGE, continue: next },
    });
  } catch (error) {
    if (!isGone(error) || next === undefined) throw error;
    const token = isKubeApiError(error) ? error.continueToken : undefined;
    if (token === undefined) throw error;
    // the list is no longer consistent: objects at a newer resourceVersion; those
    // written since are stored in the storage version already
    return kube.request<{ items: Listed[]; metadata: { continue?: string } }>(path, {
      query: { limit: PAGE, continue: token },
    });
  }
}

/** Whether the CRD is Established and stores `version`: what trimming storedVersions requires. */
function establishedStoring(crd: Crd | undefined, version: string): boolean {
  const stored = crd?.spec.versions.find((known) => known.storage)?.name;
  const established = crd?.status?.conditions?.some(
    (condition) => condition.type === 'Established' && condition.status === 'True',
  );
  return stored === version && established === true;
}

/** Writes one object back as it is; a conflict reads it again. Answers false when it is gone. */
async function rewrite(kube: MigrationClient, path: string, listed: unknown): Promise<boolean> {
  let current: unknown = listed;
  for (let attempt = 1; ; attempt++) {
    try {
      await kube.request(path, { method: 'PUT', body: current });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      if (!isConflict(error) || attempt >= ATTEMPTS) throw error;
      current = await kube.getIfExists(path);
      if (current === undefined) return false;
    }
  }
}

export async function migrateStorage(
  kube: MigrationClient,
  resource: CustomResource,
  progress: (rewritten: number) => void = () => undefined,
): Promise<MigrationReport> {
  const crdPath = `${CRDS}/${resource.plural}.${resource.group}`;
  const crd = await kube.getIfExists<Crd>(crdPath);
  if (crd === undefined)
    throw new MigrationRefused(`the CRD ${resource.plural}.${resource.group} is not installed`);
  const stored = crd.spec.versions.find((version) => version.storage)?.name;
  if (stored !== resource.version)
    throw new MigrationRefused(
      `the installed CRD stores ${stored ?? 'nothing'}, the definition ${resource.version}: apply the new CRD (kubebus generate) first`,
    );
  const storedBefore = crd.status?.storedVersions ?? [];
  const ref = refOf(resource);
  let rewritten = 0;
  let gone = 0;
  let next: string | undefined;
  do {
    const page = await pageOf(kube, collectionPath(ref), next);
    for (const object of page.items) {
      const { name, namespace } = object.metadata;
      if (await rewrite(kube, objectPath(ref, namespace ?? '', name), object)) rewritten++;
      else gone++;
    }
    progress(rewritten);
    next = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (next !== undefined);
  // every object is now in the storage version: nothing else is stored any longer — if the CRD
  // still stores it (someone applied another meanwhile) and serves it (Established)
  const now = await kube.getIfExists<Crd>(crdPath);
  if (!establishedStoring(now, resource.version))
    throw new MigrationRefused(
      `the CRD ${resource.plural}.${resource.group} is not Established with storage version ${resource.version} (now ${now?.spec.versions.find((known) => known.storage)?.name ?? 'not installed'}): storedVersions left as they are; run the migration again`,
    );
  await kube.request(`${crdPath}/status`, {
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body: { status: { storedVersions: [resource.version] } },
  });
  return { storedBefore, rewritten, gone };
}
