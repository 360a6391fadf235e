// How much each stream and bucket may store, and what happens when it is full.
// Every stream and bucket kubebus creates is bounded (max_bytes): without a
// bound the JetStream store grows to 75% of the disk, and when the disk is
// full every stream stops at once. What a full stream does depends on what it
// holds (docs/security.md, "Bounded storage"):
//
// - history and records (KUBEBUS_EVENTS, KUBEBUS_DLQ, KUBEBUS_OUTCOMES: limits
//   retention, discard old): the oldest messages go to make room. Nothing a
//   reconcile needs is lost with them: a reconciler that finds no record of
//   its object reads it from the apiserver.
// - work (KUBEBUS_WORK, KUBEBUS_STATUS: work queues, discard new): a new
//   message is refused, never an older one dropped. The publisher sees
//   `maximum bytes exceeded` (isStreamFull) and retries until the consumers
//   have made room, so nothing acknowledged is lost. A mark for an object
//   that already has one pending replaces it even then (one per subject).
// - KV buckets (cursors, leases, agreements: discard new): a put is refused;
//   history 1 keeps them at one small value per key. An operator's performed
//   bucket (ctx.once's records, ~150 bytes each) has a size of its own: full,
//   a claim is refused and no call made (retried as transient).
import { JetStreamApiError } from '@nats-io/jetstream';

export interface StorageLimits {
  /** max_bytes of KUBEBUS_EVENTS (object history: the oldest revisions go first) */
  readonly eventsBytes: number;
  /** max_bytes of KUBEBUS_WORK (pending work marks: new ones wait for room) */
  readonly workBytes: number;
  /** max_bytes of KUBEBUS_STATUS (pending status intents: new ones wait for room) */
  readonly statusBytes: number;
  /** max_bytes of KUBEBUS_DLQ (the oldest letters go first) */
  readonly deadLettersBytes: number;
  /** max_msg_size of KUBEBUS_DLQ: one letter, its reason and up to 64 KiB of payload */
  readonly deadLetterBytes: number;
  /** max_bytes of KUBEBUS_OUTCOMES */
  readonly outcomesBytes: number;
  /** max_bytes of each KV bucket (cursors, leases, agreements, deliveries) */
  readonly bucketBytes: number;
  /** max_bytes of each operator's performed bucket: ctx.once's records of its live objects (~400,000 in 64 MiB) */
  readonly performedBytes: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/**
 * The defaults, 2.06 GiB shared and 64 MiB per operator: below the test bed's and a small volume's
 * max_file_store (nats-server reserves each stream's max_bytes against it and
 * refuses a stream that does not fit). Size them to the volume with
 * `kubebus topology apply --storage` (docs/security.md).
 */
export const defaultStorageLimits: StorageLimits = {
  eventsBytes: 1 * GiB,
  workBytes: 256 * MiB,
  statusBytes: 256 * MiB,
  deadLettersBytes: 256 * MiB,
  deadLetterBytes: 128 * KiB,
  outcomesBytes: 256 * MiB,
  bucketBytes: 16 * MiB,
  performedBytes: 64 * MiB,
};

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1_000,
  kb: 1_000,
  kib: KiB,
  m: 1_000_000,
  mb: 1_000_000,
  mib: MiB,
  g: 1_000_000_000,
  gb: 1_000_000_000,
  gib: GiB,
  t: 1_000_000_000_000,
  tb: 1_000_000_000_000,
  tib: 1024 * GiB,
  // Kubernetes' quantities
  ki: KiB,
  mi: MiB,
  gi: GiB,
  ti: 1024 * GiB,
};

/** "512MiB", "2GiB", "1GB", "65536": bytes, or undefined when it is not a size. */
export function parseByteSize(text: string): number | undefined {
  const matched = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (matched === null) return undefined;
  const unitName = (matched[2] ?? '').toLowerCase();
  const unit = Object.hasOwn(UNITS, unitName) ? UNITS[unitName] : undefined;
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(matched[1]) * unit);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

const LIMIT_NAMES: Readonly<Record<string, keyof StorageLimits>> = {
  events: 'eventsBytes',
  work: 'workBytes',
  status: 'statusBytes',
  dlq: 'deadLettersBytes',
  'dlq-message': 'deadLetterBytes',
  outcomes: 'outcomesBytes',
  buckets: 'bucketBytes',
  performed: 'performedBytes',
};

/**
 * The least each size may be: below it a stream refuses what kubebus must
 * store (a dead letter of 64 KiB of payload and 4 KiB of reason; a bucket's
 * leases, cursors or records; one object's event).
 */
const MINIMUM: Readonly<Record<keyof StorageLimits, number>> = {
  eventsBytes: 16 * MiB,
  workBytes: 1 * MiB,
  statusBytes: 1 * MiB,
  deadLettersBytes: 1 * MiB,
  deadLetterBytes: 96 * KiB,
  outcomesBytes: 1 * MiB,
  bucketBytes: 1 * MiB,
  performedBytes: 1 * MiB,
};

/**
 * The sizes a flag names, `events=4GiB,work=512MiB,dlq=256MiB,dlq-message=128KiB,outcomes=…,status=…,buckets=…,performed=…`;
 * throws with the offending part.
 */
export function parseStorageSizes(text: string): Partial<StorageLimits> {
  const sizes: Partial<Record<keyof StorageLimits, number>> = {};
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const [name = '', size = '', ...rest] = part.split('=').map((s) => s.trim());
    // own keys only: `constructor` or `toString` are not limit names
    const field = Object.hasOwn(LIMIT_NAMES, name) ? LIMIT_NAMES[name] : undefined;
    if (field === undefined)
      throw new Error(
        `unknown storage limit ${JSON.stringify(name)}: expected one of ${Object.keys(LIMIT_NAMES).join(', ')}`,
      );
    const bytes = rest.length === 0 ? parseByteSize(size) : undefined;
    if (bytes === undefined)
      throw new Error(`${part.trim()}: expected ${name}=<size>, a size such as 512MiB or 2GiB`);
    if (sizes[field] !== undefined) throw new Error(`${name} is given twice`);
    if (bytes < MINIMUM[field])
      throw new Error(
        `${name}=${size} is too small: at least ${String(MINIMUM[field] / KiB)}KiB, or the stream refuses what kubebus must store`,
      );
    sizes[field] = bytes;
  }
  return sizes;
}

/** A flag's value (parseStorageSizes) over the defaults. */
export function parseStorageLimits(
  text: string,
  base: StorageLimits = defaultStorageLimits,
): StorageLimits {
  return { ...base, ...parseStorageSizes(text) };
}

/**
 * The stream refused a message because it is at a limit (discard new): room
 * comes when its consumers ack, so the publish is retried, not given up.
 */
export function isStreamFull(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    /maximum (bytes|messages) exceeded|resource limits exceeded/i.test(error.message)
  );
}
