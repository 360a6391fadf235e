// A structural diff of object revisions (for `kubebus history` and replay): the
// JSON paths that changed between two revisions, with their old and new values.
import { isDeepStrictEqual } from 'node:util';

export interface Change {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Fields every revision changes; they would drown the diff. */
const NOISE = new Set([
  'metadata.resourceVersion',
  'metadata.managedFields',
  'metadata.generation',
]);

/**
 * The keys Kubernetes merges lists of objects by (its list-map keys): such a
 * list is diffed item by item, `conditions[Ready].status`, not as a whole.
 */
const MERGE_KEYS = ['type', 'name', 'containerPort', 'mountPath', 'ip'] as const;

function mergeKeyOf(before: unknown, after: unknown): string | undefined {
  if (!Array.isArray(before) || !Array.isArray(after)) return undefined;
  const items: unknown[] = [...(before as unknown[]), ...(after as unknown[])];
  if (items.length === 0) return undefined;
  return MERGE_KEYS.find((key) => {
    const identified = (item: unknown) =>
      isRecord(item) && (typeof item[key] === 'string' || typeof item[key] === 'number');
    if (!items.every(identified)) return false;
    // the key must identify the items of each side
    const unique = (list: unknown[]) =>
      new Set(list.map((item) => String((item as Record<string, unknown>)[key]))).size ===
      list.length;
    return unique(before as unknown[]) && unique(after as unknown[]);
  });
}

export function diff(before: unknown, after: unknown, path = ''): Change[] {
  if (NOISE.has(path)) return [];
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) =>
      diff(before[key], after[key], path === '' ? key : `${path}.${key}`),
    );
  }
  const key = mergeKeyOf(before, after);
  if (key !== undefined) {
    const byKey = (list: unknown[]) =>
      new Map(list.map((item) => [String((item as Record<string, unknown>)[key]), item]));
    const [old, next] = [byKey(before as unknown[]), byKey(after as unknown[])];
    const ids = [...new Set([...old.keys(), ...next.keys()])].sort();
    return ids.flatMap((id) => diff(old.get(id), next.get(id), `${path}[${id}]`));
  }
  return isDeepStrictEqual(before, after) ? [] : [{ path, before, after }];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function formatChange(change: Change): string {
  const show = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));
  return `${change.path}: ${show(change.before)} → ${show(change.after)}`;
}
