// What JetStream may store, bounded three times over: the server's stores below
// the volume and the container's memory, and each account's share of them, so
// no user of one account can fill the disk every stream needs. Without
// `max_file_store` nats-server takes 75 % of the disk; without account limits
// an account may take all of it — the state account's user may create any
// stream it likes (ADR 0015), so its limits are the only bound on it.
// nats-server reserves a stream's `max_bytes` against these when the stream is
// made (and refuses one that does not fit); an unbounded stream is refused a
// write once its account is full. `max_consumers` is per stream.
export interface JetStreamLimits {
  /** nats-server sizes: 64MB, 1GB */
  readonly maxMem: string;
  readonly maxFile: string;
  readonly maxStreams: number;
  readonly maxConsumers: number;
}

/** The NATS StatefulSet's volume is 10Gi and its memory limit 1Gi (nats-statefulset.ts). */
export const SERVER_STORES = { maxMemoryStore: '256MB', maxFileStore: '8GB' } as const;

/**
 * kubebus' own account: its streams and buckets reserve 2.06 GiB by default, and 64 MiB per operator (its performed bucket)
 * (docs/security.md, Bounded storage), room to raise them, and an operator's
 * durable consumers (a few dozen) plus one-pass reads per stream, each gone
 * 10 s after it (one-pass.ts, ADR 0032). nats-server
 * refuses to start when the accounts' `max_file` add up to more than its
 * store: 3 GB here and 512 MB per state account fit 8 GB (and the test
 * bed's 4 GB) with room for several operators.
 */
export const KUBEBUS_ACCOUNT_LIMITS: JetStreamLimits = {
  maxMem: '64MB',
  maxFile: '3GB',
  maxStreams: 64,
  maxConsumers: 512,
};

/** An operator's state account (setup's object stores and buckets): 512 MB, 1024 streams (the example makes one bucket per DatabaseCluster; streams cost no storage until written). */
export const STATE_ACCOUNT_LIMITS: JetStreamLimits = {
  maxMem: '64MB',
  maxFile: '512MB',
  maxStreams: 1024,
  maxConsumers: 32,
};

/** The `jetstream { … }` block of an account, indented for `accounts { NAME { … } }`. */
export function accountJetStream(limits: JetStreamLimits): string[] {
  return [
    '    jetstream {',
    `      max_mem: ${limits.maxMem}`,
    `      max_file: ${limits.maxFile}`,
    `      max_streams: ${limits.maxStreams}`,
    `      max_consumers: ${limits.maxConsumers}`,
    '    }',
  ];
}
