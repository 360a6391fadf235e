// Creating and checking the streams and buckets of topology.ts. Two callers:
// the topology step (`kubebus topology apply`, under an admin user) creates
// what is missing and updates what differs; every service at start checks
// the same and only creates or updates where its user may — in production
// its user may not (no STREAM.CREATE/UPDATE), so a missing stream is waited
// for with one line saying to run the topology step, and a stream that
// differs from this version's declaration is reported, not rewritten.
import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
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
  sizeLimitsOf,
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

/** Storage bounds: the topology step sets those it is given; a service only sees that there is one. */
const SIZE_FIELDS = ['max_bytes', 'max_msg_size'] as const;
type SizeField = (typeof SIZE_FIELDS)[number];
const isSizeField = (field: string): field is SizeField =>
  (SIZE_FIELDS as readonly string[]).includes(field);

/**
 * Whether a stream keeps a size the server has (any bound) rather than get
 * the declared one: always for a service (where-allowed), which does not know
 * the topology step's sizes; for the topology step, each size it was not
 * given (`sized`, topology.ts) — streams are shared, and a run without
 * `--storage` must not undo another run's.
 */
function keepsSize(
  stream: string,
  field: SizeField,
  mode: TopologyMode,
  sized: TopologyOptions['sized'],
): boolean {
  if (mode === 'where-allowed') return true;
  const limit = sizeLimitsOf(stream)[field];
  return sized !== undefined && limit !== undefined && !sized.has(limit);
}

/** The fields of `wanted` the server's configuration does not have as declared (a kept size: a bound at all). */
function differingFields(
  wanted: Partial<StreamConfig>,
  actual: StreamConfig,
  keeps: (field: SizeField) => boolean,
): string[] {
  return Object.entries(wanted)
    .filter(([field, value]) => {
      const have = actual[field as keyof StreamConfig];
      if (isSizeField(field) && keeps(field)) return typeof have !== 'number' || have <= 0;
      return !isDeepStrictEqual(value, have);
    })
    .map(([field]) => field);
}

/** What an update sends: the declaration, with the sizes kept as the server has them. */
function withKeptSizes(
  wanted: StreamConfig,
  actual: StreamConfig,
  keeps: (field: SizeField) => boolean,
): StreamConfig {
  const config = { ...wanted };
  for (const field of SIZE_FIELDS) {
    const have = actual[field];
    if (keeps(field) && typeof have === 'number' && have > 0) config[field] = have;
  }
  return config;
}

const MiB = 1024 * 1024;

/**
 * A stream that discards new messages (a work queue, a bucket) made smaller
 * than what it holds would refuse every new one: refused with what to give.
 */
function refuseShrinkBelowUse(info: StreamInfo, maxBytes: number | undefined): void {
  const { bytes } = info.state;
  if (info.config.discard !== DiscardPolicy.New || maxBytes === undefined || maxBytes <= 0) return;
  // a stream made before bounds existed is unbounded (-1): any bound is a shrink
  const bounded = info.config.max_bytes > 0;
  if (maxBytes >= bytes || (bounded && maxBytes >= info.config.max_bytes)) return;
  throw new Error(
    `${info.config.name} holds ${(bytes / MiB).toFixed(1)} MiB, more than the ${(maxBytes / MiB).toFixed(1)} MiB asked: it would refuse every new message; give it a larger size (--storage) or let its consumers drain it first`,
  );
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
  update(found: Config): Promise<unknown>;
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
    const found = await object.read();
    const fields = object.differing(found);
    if (fields.length === 0) return { stream, result: 'unchanged' };
    if (mode === 'check') return { stream, result: 'differs', fields };
    try {
      await object.update(found);
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
  sized: TopologyOptions['sized'],
): Promise<TopologyChange> {
  const keeps = (field: SizeField) => keepsSize(wanted.name, field, mode, sized);
  return applyTopologyObject<StreamInfo>(
    {
      name: wanted.name,
      read: () => jsm.streams.info(wanted.name),
      isMissing: isStreamNotFound,
      differing: (found) => differingFields(wanted, found.config, keeps),
      update: (found) => {
        const config = withKeptSizes(wanted, found.config, keeps);
        refuseShrinkBelowUse(found, config.max_bytes);
        return jsm.streams.update(wanted.name, config);
      },
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
  sized?: TopologyOptions['sized'],
): Promise<TopologyChange> {
  const stream = `KV_${bucket.name}`;
  const keeps = (field: SizeField) => keepsSize(stream, field, mode, sized);
  try {
    const info = await jsm.streams.info(stream);
    const { config } = info;
    // a bucket's stream is the KV client's; only its bound is kubebus' to keep
    const fields = differingFields({ max_bytes: bucket.max_bytes }, config, keeps);
    if (fields.length === 0) return { stream, result: 'unchanged' };
    if (mode === 'check') return { stream, result: 'differs', fields };
    try {
      const updated = withKeptSizes({ ...config, max_bytes: bucket.max_bytes }, config, keeps);
      refuseShrinkBelowUse(info, updated.max_bytes);
      await jsm.streams.update(stream, updated);
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
  for (const config of streamConfigs(options))
    changes.push(await applyStream(jsm, config, mode, options.sized));
  for (const bucket of bucketConfigs(options))
    changes.push(await applyBucket(nc, jsm, bucket, mode, options.sized));
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
