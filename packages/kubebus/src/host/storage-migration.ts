// Moves every stored object of a resource to its storage version, as
// kube-storage-version-migrator does: each object is read in the storage
// version and written back unchanged (the apiserver converts on read and
// encodes in the storage version on write; a conflict reads it again), then
// the CRD's status.storedVersions is trimmed to the storage version alone, so
// an old version can later be dropped from the CRD.
import type { CustomResource } from '@kubebus/shared/definition';
import { isConflict, isNotFound, type KubeClient } from '@kubebus/shared/kube';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const PAGE = 200;
const ATTEMPTS = 5;

interface Listed {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

interface Crd {
  readonly spec: {
    readonly versions: readonly { readonly name: string; readonly storage: boolean }[];
  };
  readonly status?: { readonly storedVersions?: readonly string[] };
}

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

function collection(resource: CustomResource): string {
  return `/apis/${resource.group}/${resource.version}/${resource.plural}`;
}

function pathOf(resource: CustomResource, object: Listed): string {
  const { name, namespace } = object.metadata;
  const base = `/apis/${resource.group}/${resource.version}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${scope}/${resource.plural}/${encodeURIComponent(name)}`;
}

/** Writes one object back as it is; a conflict reads it again. Answers false when it is gone. */
async function rewrite(kube: KubeClient, path: string, listed: unknown): Promise<boolean> {
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
  kube: KubeClient,
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
  let rewritten = 0;
  let gone = 0;
  let next: string | undefined;
  do {
    const page = await kube.request<{
      items: Listed[];
      metadata: { continue?: string };
    }>(collection(resource), { query: { limit: PAGE, continue: next } });
    for (const object of page.items) {
      if (await rewrite(kube, pathOf(resource, object), object)) rewritten++;
      else gone++;
    }
    progress(rewritten);
    next = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (next !== undefined);
  // every object is now in the storage version: nothing else is stored any longer
  await kube.request(`${crdPath}/status`, {
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body: { status: { storedVersions: [resource.version] } },
  });
  return { storedBefore, rewritten, gone };
}
