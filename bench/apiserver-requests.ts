// The apiserver's own count of the requests it served
// (apiserver_request_total), so every system is measured by the same judge.
import { httpCall } from '../test/bed/http.js';
import type { TestBed } from '../test/bed/testbed.js';

export type RequestCounts = Map<string, number>; // "VERB resource code" → count

export async function apiserverRequests(bed: TestBed): Promise<RequestCounts> {
  const res = await httpCall(`${bed.apiserverUrl}/metrics`, {
    tls: bed.adminTls,
    timeoutMs: 30_000,
  });
  const counts: RequestCounts = new Map();
  for (const line of res.body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    // Watches, and the apiserver's own lease and discovery traffic, are not the system's work.
    if (labels['verb'] === 'WATCH' || labels['resource'] === 'leases' || !labels['resource'])
      continue;
    const id = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''} ${labels['code']}`;
    counts.set(id, (counts.get(id) ?? 0) + value);
  }
  return counts;
}

export function difference(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [id, n] of after) {
    const d = n - (before.get(id) ?? 0);
    if (d > 0) out.set(id, d);
  }
  return out;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE']);

export function summarize(counts: RequestCounts): { writes: number; gets: number; lists: number } {
  let writes = 0;
  let gets = 0;
  let lists = 0;
  for (const [id, n] of counts) {
    const verb = id.split(' ')[0] ?? '';
    if (WRITES.has(verb)) writes += n;
    else if (verb === 'GET') gets += n;
    else if (verb === 'LIST') lists += n;
  }
  return { writes, gets, lists };
}
