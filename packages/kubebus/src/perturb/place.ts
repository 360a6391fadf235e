// Where one run of the workload lives on the shared bed, apart from every
// other run: a namespace of its own for a namespaced kind; for a
// cluster-scoped kind (which has no namespace to hide in), a name of its own,
// the workload's name with the run's token. The states of two runs are
// compared with the run's own names replaced by one placeholder, and a target
// taken from the reference (a stale schedule's `Kind/name`) is put back into
// this run's names.
import type { Resource } from '@kubebus/shared/definition';

export interface Place {
  /** what the recording files this run's reconciles under: the namespace, or the name when cluster-scoped */
  readonly key: string;
  /** the primary's namespace; '' when its kind is cluster-scoped */
  readonly namespace: string;
  /** the primary's name */
  readonly name: string;
  /** whether the run has a namespace of its own (its kind is namespaced) */
  readonly namespaced: boolean;
  /** a text with this run's own name written as the placeholder every run shares */
  general(text: string): string;
  /** a text from `general`, in this run's names again */
  specific(text: string): string;
}

export const NAMESPACE_PLACEHOLDER = '<namespace>';
export const NAME_PLACEHOLDER = '<name>';

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The place of the run `token` (e.g. kbt-3): a namespaced kind's object keeps
 * the workload's name in the namespace `token`; a cluster-scoped kind's is
 * named `<workload>-<token>`.
 */
export function placeOf(primary: Pick<Resource, 'scope'>, token: string, name: string): Place {
  if (primary.scope === 'Namespaced') {
    // the namespace as a whole DNS label only: "a" in "example.com" is not the namespace "a"
    const label = new RegExp(`(?<![a-z0-9-])${escaped(token)}(?![a-z0-9-])`, 'g');
    return {
      key: token,
      namespace: token,
      name,
      namespaced: true,
      general: (text) => text.replace(label, NAMESPACE_PLACEHOLDER),
      specific: (text) => text.replaceAll(NAMESPACE_PLACEHOLDER, token),
    };
  }
  const own = `${name}-${token}`;
  // inside other names too (a Tenant's namespace "tenant-<name>"), but not a longer token ("kbt-1" in "kbt-12")
  const anywhere = new RegExp(`${escaped(own)}(?![0-9])`, 'g');
  return {
    key: own,
    namespace: '',
    name: own,
    namespaced: false,
    general: (text) => text.replace(anywhere, NAME_PLACEHOLDER),
    specific: (text) => text.replaceAll(NAME_PLACEHOLDER, own),
  };
}

/** A spec with the placeholders it holds (`<name>`, `<namespace>`) made the place's own. */
export function inPlace(place: Pick<Place, 'specific'>, spec: unknown): unknown {
  return JSON.parse(place.specific(JSON.stringify(spec ?? {}))) as unknown;
}

/** A value (a state) with every string in it, keys too, made general. */
export function generalized<T>(place: Pick<Place, 'general'>, value: T): T {
  const replace = (item: unknown): unknown => {
    if (typeof item === 'string') return place.general(item);
    if (Array.isArray(item)) return item.map(replace);
    if (typeof item === 'object' && item !== null)
      return Object.fromEntries(
        Object.entries(item).map(([key, field]) => [replace(key), replace(field)]),
      );
    return item;
  };
  return replace(value) as T;
}
