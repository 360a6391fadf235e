// The subjects of kubebus' streams. An object's identity (group, resource,
// namespace, name) is carried in tokens encoded by subject-token.ts, so filters
// can select one object, one namespace or one resource.
//
// Every subject an object key goes into is bounded (MAX_SUBJECT_BYTES): a
// longer one throws KUBEBUS_INVALID_KEY here, before any publish. nats-server
// reads a PUB line of at most max_control_line (4 KiB by default) and drops the
// connection of a client that sends a longer one — with it every subscription
// and in-flight publish of the process.
import { createHash } from 'node:crypto';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { ObjectKey } from '../kube/refs.js';
import { decodeToken, encodeToken } from './subject-token.js';

export const SUBJECT_ROOT = 'kubebus';

/**
 * The longest subject kubebus publishes or asks for: half of nats-server's
 * default max_control_line, leaving room for the reply inbox, the sizes and
 * the `$JS.API.DIRECT.GET.<stream>.` prefix of a read by subject. A key that
 * follows Kubernetes' naming rules (kube/names.ts) needs at most ~720 bytes.
 */
export const MAX_SUBJECT_BYTES = 2048;

function bounded(subject: string): string {
  const bytes = Buffer.byteLength(subject);
  if (bytes > MAX_SUBJECT_BYTES)
    throw new KubebusError(
      ErrorCodes.InvalidKey,
      `invalid key: its subject would be ${bytes} bytes, more than the ${MAX_SUBJECT_BYTES} kubebus publishes (${subject.slice(0, 80)}…)`,
    );
  return subject;
}

function keyTokens(key: ObjectKey): string {
  return [key.group, key.resource, key.namespace, key.name].map(encodeToken).join('.');
}

function resourceTokens(key: Pick<ObjectKey, 'group' | 'resource'>): string {
  return `${encodeToken(key.group)}.${encodeToken(key.resource)}`;
}

/** The key tokens of a dead letter whose key cannot make a subject: a digest of it. */
function unsubjectableKeyTokens(key: ObjectKey): string {
  const digest = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 32);
  return `~.invalid-key.~.${digest}`;
}

export const subjects = {
  /** Full objects, the history of each: kubebus.events.<group>.<resource>.<ns>.<name> */
  event: (key: ObjectKey) => bounded(`${SUBJECT_ROOT}.events.${keyTokens(key)}`),
  eventsOf: (resource: Pick<ObjectKey, 'group' | 'resource'>) =>
    bounded(`${SUBJECT_ROOT}.events.${resourceTokens(resource)}.>`),
  allEvents: `${SUBJECT_ROOT}.events.>`,

  /** "This object needs a reconcile": kubebus.work.<controller>.<partition>.<key> */
  work: (controller: string, partition: number, key: ObjectKey) =>
    bounded(`${SUBJECT_ROOT}.work.${encodeToken(controller)}.p${partition}.${keyTokens(key)}`),
  workOfPartition: (controller: string, partition: number) =>
    bounded(`${SUBJECT_ROOT}.work.${encodeToken(controller)}.p${partition}.>`),
  workOf: (controller: string) => bounded(`${SUBJECT_ROOT}.work.${encodeToken(controller)}.>`),
  /**
   * A requeue waiting for its time (later-requeues.ts): kubebus.work.<controller>.later.<key>.
   * In the work stream, one per object, outside every partition's filter (`p<n>`).
   */
  later: (controller: string, key: ObjectKey) =>
    bounded(`${SUBJECT_ROOT}.work.${encodeToken(controller)}.later.${keyTokens(key)}`),
  laterOf: (controller: string) =>
    bounded(`${SUBJECT_ROOT}.work.${encodeToken(controller)}.later.>`),
  allWork: `${SUBJECT_ROOT}.work.>`,

  /**
   * Desired status: kubebus.status.<controller>.<partition>.<key>. The
   * controller's token lets NATS keep each operator's users to their own.
   */
  status: (controller: string, partition: number, key: ObjectKey) =>
    bounded(`${SUBJECT_ROOT}.status.${encodeToken(controller)}.p${partition}.${keyTokens(key)}`),
  statusOfPartition: (controller: string, partition: number) =>
    bounded(`${SUBJECT_ROOT}.status.${encodeToken(controller)}.p${partition}.>`),
  statusOf: (controller: string) => bounded(`${SUBJECT_ROOT}.status.${encodeToken(controller)}.>`),
  allStatus: `${SUBJECT_ROOT}.status.>`,

  /** What a controller did with an object: kubebus.outcomes.<controller>.<key> */
  outcome: (controller: string, key: ObjectKey) =>
    bounded(`${SUBJECT_ROOT}.outcomes.${encodeToken(controller)}.${keyTokens(key)}`),
  outcomesOfController: (controller: string) =>
    bounded(`${SUBJECT_ROOT}.outcomes.${encodeToken(controller)}.>`),
  outcomesOf: (key: ObjectKey) => bounded(`${SUBJECT_ROOT}.outcomes.*.${keyTokens(key)}`),
  allOutcomes: `${SUBJECT_ROOT}.outcomes.>`,

  /**
   * Dead letters: kubebus.dlq.<origin>.<key tokens>. Never throws: a key too
   * long for a subject (the letter is often about exactly that) is replaced in
   * the subject by a digest, under the resource `invalid-key`; the letter's
   * body keeps the key.
   */
  deadLetter: (origin: string, key: ObjectKey) => {
    const prefix = `${SUBJECT_ROOT}.dlq.${encodeToken(origin)}`;
    const subject = `${prefix}.${keyTokens(key)}`;
    return Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES
      ? subject
      : bounded(`${prefix}.${unsubjectableKeyTokens(key)}`);
  },
  allDeadLetters: `${SUBJECT_ROOT}.dlq.>`,
} as const;

/** The object key carried by the last four tokens of any kubebus object subject. */
export function keyOfSubject(subject: string): ObjectKey {
  const tokens = subject.split('.');
  if (tokens.length < 4) throw new Error(`subject ${subject} carries no object key`);
  const [group, resource, namespace, name] = tokens.slice(-4).map(decodeToken) as [
    string,
    string,
    string,
    string,
  ];
  return { group, resource, namespace, name };
}

const NOT_ASCII = /[^\p{ASCII}]/u;

/** A stable partition for an object (FNV-1a over its identity), in [0, partitions). */
export function partitionOf(key: ObjectKey, partitions: number): number {
  const text = `${key.group}/${key.resource}/${key.namespace}/${key.name}`;
  let hash = 0x811c9dc5;
  // FNV-1a over the UTF-8 bytes; an ASCII key's bytes are its char codes, read without a Buffer
  if (!NOT_ASCII.test(text)) {
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
  } else {
    for (const byte of Buffer.from(text)) {
      hash ^= byte;
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
  }
  return hash % partitions;
}
