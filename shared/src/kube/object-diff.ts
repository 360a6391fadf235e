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

export function diff(before: unknown, after: unknown, path = ''): Change[] {
  if (NOISE.has(path)) return [];
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) =>
      diff(before[key], after[key], path === '' ? key : `${path}.${key}`),
    );
  }
  return isDeepStrictEqual(before, after) ? [] : [{ path, before, after }];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function formatChange(change: Change): string {
  const show = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));
  return `${change.path}: ${show(change.before)} → ${show(change.after)}`;
}
