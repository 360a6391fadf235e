// `kubebus topology apply|check`: the one-shot step that owns the streams and
// buckets, so the services' own NATS users need no right to create, update or
// delete them.
import type { TopologyChange } from '@kubebus/shared/bus';
import { table } from './table.js';

export function formatTopology(changes: readonly TopologyChange[]): string {
  const trouble = changes.filter(({ result }) => result === 'missing' || result === 'differs');
  return `${table(
    ['STREAM', 'RESULT', 'FIELDS'],
    changes.map(({ stream, result, fields }) => [stream, result, (fields ?? []).join(', ')]),
  )}${
    trouble.length === 0
      ? ''
      : 'run `kubebus topology apply` as the NATS admin user to create or update them\n'
  }`;
}
