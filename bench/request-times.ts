// How long an apiserver request takes, seen from both ends: the system's own
// rest_client_request_duration_seconds (client-go's name; kubebus exports it,
// and the bench's controller-runtime peer times its transport under it, as
// controller-runtime no longer registers it) and the apiserver's
// apiserver_request_duration_seconds. What the client waits beyond what the
// server took is spent in the client's process and on the wire: on two
// saturated cores, mostly waiting for a turn of the client's event loop.
export interface Timing {
  readonly seconds: number;
  readonly count: number;
}
/** verb → the seconds and count summed over its requests */
export type Timings = Map<string, Timing>;

/** The `_sum` and `_count` of a histogram, by verb, from a Prometheus text page. */
export function timingsOf(
  text: string,
  histogram: string,
  keep: (labels: Record<string, string>) => boolean = () => true,
): Timings {
  const timings: Timings = new Map();
  for (const line of text.split('\n')) {
    const part = line.startsWith(`${histogram}_sum{`)
      ? 'seconds'
      : line.startsWith(`${histogram}_count{`)
        ? 'count'
        : undefined;
    if (part === undefined) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (!keep(labels)) continue;
    const verb = sameVerb(labels['verb'] ?? '');
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const sum = timings.get(verb) ?? { seconds: 0, count: 0 };
    timings.set(verb, { ...sum, [part]: sum[part] + value });
  }
  return timings;
}

/** The apiserver's request times, without watches and the apiserver's own lease and discovery traffic. */
export function serverTimingsOf(text: string): Timings {
  return timingsOf(
    text,
    'apiserver_request_duration_seconds',
    (labels) =>
      labels['verb'] !== 'WATCH' && labels['resource'] !== 'leases' && !!labels['resource'],
  );
}

/** The apiserver names a request by what it does (APPLY, LIST), the client by its HTTP method. */
function sameVerb(verb: string): string {
  if (verb === 'APPLY') return 'PATCH';
  if (verb === 'LIST') return 'GET';
  return verb;
}

export function timingsBetween(after: Timings, before: Timings): Timings {
  const out: Timings = new Map();
  for (const [verb, { seconds, count }] of after) {
    const was = before.get(verb) ?? { seconds: 0, count: 0 };
    if (count - was.count > 0)
      out.set(verb, { seconds: seconds - was.seconds, count: count - was.count });
  }
  return out;
}

/** "PATCH 31.2 ms (client) / 8.4 ms (apiserver), 2,000 requests; …" */
export function formatTimings(client: Timings, server: Timings): string {
  const verbs = [...new Set([...client.keys(), ...server.keys()])].sort();
  const mean = (t: Timing | undefined) =>
    t === undefined || t.count === 0 ? '–' : ((t.seconds / t.count) * 1_000).toFixed(1);
  return verbs
    .map(
      (verb) =>
        `${verb} ${mean(client.get(verb))} / ${mean(server.get(verb))} ms (${client.get(verb)?.count ?? 0} / ${server.get(verb)?.count ?? 0})`,
    )
    .join('; ');
}
