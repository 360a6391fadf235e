// Creating and checking the streams and buckets of topology.ts. Two callers:
// the topology step (`kubebus topology apply`, under an admin user) creates
// what is missing and updates what differs; every service at start checks
// the same and only creates or updates where its user may — in production
// its user may not (no STREAM.CREATE/UPDATE), so a missing stream is waited
// for with one line saying to run the topology step, and a stream that
// differs from this version's declaration is reported, not rewritten.
import {
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { isDeepStrictEqual } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../obs/mod.js';
import { backoffDelay } from '../runtime/backoff.js';
import {
  bucketConfigs,
  defaultTopology,
  streamConfigs,
  type BucketConfig,
  type TopologyOptions,
} from './topology.js';

export interface TopologyChange {
  /** a stream, or a KV bucket's stream (KV_<bucket>) */
  readonly stream: string;
  /** removed: what an older layout left behind (legacy-layout.ts) */
  readonly result: 'created' | 'updated' | 'unchanged' | 'missing' | 'differs' | 'removed';
  /** the fields that differ (updated, or differs where the user may not update) */
  readonly fields?: readonly string[];
}

/** The user may not call this JetStream API (its allow list leaves it out). */
export function isPermissionRefusal(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (cause.name === 'PermissionViolationError') return true;
  return false;
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/** Storage bounds: the topology step sets them exactly; a service only sees that there is one. */
const SIZE_FIELDS: ReadonlySet<string> = new Set(['max_bytes', 'max_msg_size']);

/**
 * The fields of `wanted` the server's configuration does not have as declared.
 * A service (where-allowed) takes any bound the topology step sized as its own
 * and reports only an unbounded size: the sizes are the topology step's
 * settings (`kubebus topology apply`), which a service does not know.
 */
function differingFields(
  wanted: Partial<StreamConfig>,
  actual: StreamConfig,
  mode: TopologyMode,
): string[] {
  return Object.entries(wanted)
    .filter(([field, value]) => {
      const have = actual[field as keyof StreamConfig];
      if (mode === 'where-allowed' && SIZE_FIELDS.has(field))
        return typeof have !== 'number' || have <= 0;
      return !isDeepStrictEqual(value, have);
    })
    .map(([field]) => field);
}

/**
 * apply: create and update (the topology step); where-allowed: the same where
 * the user may, reporting the rest (a service at start); check: change nothing.
 */
export type TopologyMode = 'apply' | 'where-allowed' | 'check';

/** How to read, compare, update and create one JetStream object (a stream, a consumer). */
export interface TopologyObject<Config> {
  readonly name: string;
  read(): Promise<Config>;
  isMissing(error: unknown): boolean;
  differing(found: Config): string[];
  update(): Promise<unknown>;
  create(): Promise<unknown>;
}

/**
 * One object brought to what is wanted: created when missing, updated when it
 * differs ('check' only says so; 'where-allowed' says so where the user may not).
 */
export async function applyTopologyObject<Config>(
  object: TopologyObject<Config>,
  mode: TopologyMode,
): Promise<TopologyChange> {
  const stream = object.name;
  const mayRefuse = mode === 'where-allowed';
  try {
    const fields = object.differing(await object.read());
    if (fields.length === 0) return { stream, result: 'unchanged' };
    if (mode === 'check') return { stream, result: 'differs', fields };
    try {
      await object.update();
      return { stream, result: 'updated', fields };
    } catch (error) {
      if (mayRefuse && isPermissionRefusal(error)) return { stream, result: 'differs', fields };
      throw error;
    }
  } catch (error) {
    if (!object.isMissing(error)) throw error;
  }
  if (mode === 'check') return { stream, result: 'missing' };
  try {
    await object.create();
    return { stream, result: 'created' };
  } catch (error) {
    if (mayRefuse && isPermissionRefusal(error)) return { stream, result: 'missing' };
    // another process created it meanwhile
    if (error instanceof JetStreamApiError && error.status === 400)
      return { stream, result: 'unchanged' };
    throw error;
  }
}

async function applyStream(
  jsm: JetStreamManager,
  wanted: StreamConfig,
  mode: TopologyMode,
): Promise<TopologyChange> {
  return applyTopologyObject(
    {
      name: wanted.name,
      read: async () => (await jsm.streams.info(wanted.name)).config,
      isMissing: isStreamNotFound,
      differing: (found) => differingFields(wanted, found, mode),
      update: () => jsm.streams.update(wanted.name, wanted),
      create: () => jsm.streams.add(wanted),
    },
    mode,
  );
}

export async function applyBucket(
  nc: NatsConnection,
  jsm: JetStreamManager,
  bucket: BucketConfig,
  mode: TopologyMode,
): Promise<TopologyChange> {
  const stream = `KV_${bucket.name}`;
  try {
    const { config } = await jsm.streams.info(stream);
    // a bucket's stream is the KV client's; only its bound is kubebus' to keep
    const fields = differingFields({ max_bytes: bucket.max_bytes }, config, mode);
    if (fields.length === 0) return { stream, result: 'unchanged' };
    if (mode === 'check') return { stream, result: 'differs', fields };
    try {
      await jsm.streams.update(stream, { ...config, max_bytes: bucket.max_bytes });
      return { stream, result: 'updated', fields };
    } catch (error) {
      if (mode === 'where-allowed' && isPermissionRefusal(error))
        return { stream, result: 'differs', fields };
      throw error;
    }
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  if (mode === 'check') return { stream, result: 'missing' };
  const { name, ...options } = bucket;
  try {
    await new Kvm(nc).create(name, options);
    return { stream, result: 'created' };
  } catch (error) {
    if (mode === 'where-allowed' && isPermissionRefusal(error))
      return { stream, result: 'missing' };
    throw error;
  }
}

/**
 * Creates what is missing and updates what differs; idempotent, safe from
 * many processes at once. What the mode does not change, or the user may not,
 * is reported ('missing', 'differs') instead.
 */
export async function applyTopology(
  nc: NatsConnection,
  options: TopologyOptions = defaultTopology,
  mode: TopologyMode = 'apply',
): Promise<TopologyChange[]> {
  const jsm = await jetstreamManager(nc);
  const changes: TopologyChange[] = [];
  for (const config of streamConfigs(options)) changes.push(await applyStream(jsm, config, mode));
  for (const bucket of bucketConfigs(options))
    changes.push(await applyBucket(nc, jsm, bucket, mode));
  return changes;
}

/**
 * The JetStream clients of a service, once the topology it relies on exists:
 * created here where the user may (a local stack), else waited for.
 */
export async function openJetStream(
  nc: NatsConnection,
  options: TopologyOptions,
  log: Logger,
): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
  for (let attempt = 1; ; attempt++) {
    const changes = await applyTopology(nc, options, 'where-allowed');
    for (const { stream, fields } of changes.filter(({ result }) => result === 'differs'))
      log.warn(
        { stream, fields },
        `stream ${stream} differs from what this kubebus version declares (${(fields ?? []).join(', ')}); run \`kubebus topology apply\` as the NATS admin user`,
      );
    const missing = changes.filter(({ result }) => result === 'missing').map((c) => c.stream);
    if (missing.length === 0) return { js: jetstream(nc), jsm: await jetstreamManager(nc) };
    log.warn(
      { missing, attempt },
      `waiting for ${missing.join(', ')}: this NATS user may not create streams; run \`kubebus topology apply\` (the topology Job) as the NATS admin user`,
    );
    await sleep(backoffDelay({ baseMs: 1_000, capMs: 15_000 }, attempt));
  }
}

/**
 * One of an operator's buckets (performedBucketConfig), once it exists:
 * created here where the user may, else waited for, saying what to run.
 */
export async function openOperatorBucket(
  nc: NatsConnection,
  bucket: BucketConfig,
  log: Logger,
): Promise<KV> {
  const jsm = await jetstreamManager(nc);
  for (let attempt = 1; ; attempt++) {
    const { result } = await applyBucket(nc, jsm, bucket, 'where-allowed');
    if (result !== 'missing') return new Kvm(nc).open(bucket.name);
    log.warn(
      { missing: `KV_${bucket.name}`, attempt },
      `waiting for KV_${bucket.name}: this NATS user may not create it; run \`kubebus topology apply <operator>\` (the topology Job) as the NATS admin user`,
    );
    await sleep(backoffDelay({ baseMs: 1_000, capMs: 15_000 }, attempt));
  }
}
