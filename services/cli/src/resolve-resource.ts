// What a person types for a resource, resolved like kubectl does: a kind
// (StaticSite), a plural (staticsites), a singular or a short name (site),
// each optionally with .group — through the apiserver's discovery when a
// kubeconfig is at hand, else read literally as resource[.group].
import type { KubeClient } from '@kubebus/shared/kube';
import type { ObjectKey } from '@kubebus/shared/runtime';
import { UsageError } from './usage-error.js';

export interface ResolvedResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

interface ApiResource {
  readonly name: string;
  readonly singularName?: string;
  readonly shortNames?: readonly string[];
  readonly kind: string;
  readonly namespaced: boolean;
}

/** resource[.group] taken literally (no discovery). */
export function literalResource(text: string): Pick<ResolvedResource, 'group' | 'resource'> {
  const [resource = '', ...group] = text.split('.');
  return { resource, group: group.join('.') };
}

export async function resolveResource(
  client: KubeClient,
  text: string,
): Promise<ResolvedResource | undefined> {
  const [word = '', ...rest] = text.split('.');
  const wantedGroup = rest.length === 0 ? undefined : rest.join('.');
  const matches = (resource: ApiResource) =>
    !resource.name.includes('/') &&
    [
      resource.name,
      resource.singularName,
      resource.kind.toLowerCase(),
      ...(resource.shortNames ?? []),
    ]
      .filter((name) => name !== undefined && name !== '')
      .includes(word.toLowerCase());

  const versions: { group: string; version: string }[] = [{ group: '', version: 'v1' }];
  const groups = await client.request<{
    groups?: { name: string; preferredVersion?: { version: string } }[];
  }>('/apis');
  for (const group of groups.groups ?? [])
    if (
      group.preferredVersion !== undefined &&
      (wantedGroup === undefined || wantedGroup === group.name)
    )
      versions.push({ group: group.name, version: group.preferredVersion.version });
  for (const { group, version } of versions) {
    if (wantedGroup !== undefined && group !== wantedGroup) continue;
    const list = await client
      .request<{ resources?: ApiResource[] }>(
        group === '' ? `/api/${version}` : `/apis/${group}/${version}`,
      )
      .catch(() => undefined);
    const found = list?.resources?.find(matches);
    if (found !== undefined)
      return {
        group,
        version,
        resource: found.name,
        kind: found.kind,
        namespaced: found.namespaced,
      };
  }
  return undefined;
}

/** The resource a person named, or a UsageError: the apiserver serves none such. */
export async function requireResource(client: KubeClient, text: string): Promise<ResolvedResource> {
  const resolved = await resolveResource(client, text);
  if (resolved === undefined)
    throw new UsageError(
      `the apiserver serves no resource called "${text}"; kubectl api-resources lists them`,
    );
  return resolved;
}

/** One object as a person names it: `kubebus status <resource> <namespace/name | name>`. */
export interface ObjectRef {
  /** a kind, plural, singular or short name, optionally .group */
  readonly resource: string;
  /** undefined: cluster-scoped (refused for a namespaced resource the apiserver names) */
  readonly namespace?: string | undefined;
  readonly name: string;
}

export type ResolvedObject = ObjectKey & {
  readonly version?: string;
  readonly namespaced?: boolean;
};

/** The object's key: its resource resolved through discovery when `kube` is given. */
export async function resolveObject(
  kube: KubeClient | undefined,
  ref: ObjectRef,
): Promise<ResolvedObject> {
  if (kube === undefined) {
    const { group, resource } = literalResource(ref.resource);
    return { group, resource, namespace: ref.namespace ?? '', name: ref.name };
  }
  const { group, resource, version, namespaced } = await requireResource(kube, ref.resource);
  // a bare name of a namespaced kind names no object: said, not answered "not found"
  if (namespaced && ref.namespace === undefined)
    throw new UsageError(
      `${resource}${group === '' ? '' : `.${group}`} is namespaced: name the object as <namespace>/${ref.name} (for example default/${ref.name})`,
    );
  return {
    group,
    resource,
    version,
    namespaced,
    namespace: namespaced ? (ref.namespace ?? '') : '',
    name: ref.name,
  };
}
