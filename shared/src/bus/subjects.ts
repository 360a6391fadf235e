// The subjects of kubebus' streams. An object's identity (group, resource,
// namespace, name) is carried in tokens encoded by subject-token.ts, so filters
// can select one object, one namespace or one resource.
import type { ObjectKey } from '../kube/refs.js';
import { decodeToken, encodeToken } from './subject-token.js';

export const SUBJECT_ROOT = 'kubebus';

function keyTokens(key: ObjectKey): string {
  return [key.group, key.resource, key.namespace, key.name].map(encodeToken).join('.');
}

function resourceTokens(key: Pick<ObjectKey, 'group' | 'resource'>): string {
  return `${encodeToken(key.group)}.${encodeToken(key.resource)}`;
}

export const subjects = {
  /** Full objects, the history of each: kubebus.events.<group>.<resource>.<ns>.<name> */
  event: (key: ObjectKey) => `${SUBJECT_ROOT}.events.${keyTokens(key)}`,
  eventsOf: (resource: Pick<ObjectKey, 'group' | 'resource'>) =>
    `${SUBJECT_ROOT}.events.${resourceTokens(resource)}.>`,
  allEvents: `${SUBJECT_ROOT}.events.>`,

  /** "This object needs a reconcile": kubebus.work.<controller>.<partition>.<key> */
  work: (controller: string, partition: number, key: ObjectKey) =>
    `${SUBJECT_ROOT}.work.${encodeToken(controller)}.p${partition}.${keyTokens(key)}`,
  workOfPartition: (controller: string, partition: number) =>
    `${SUBJECT_ROOT}.work.${encodeToken(controller)}.p${partition}.>`,
  allWork: `${SUBJECT_ROOT}.work.>`,

  /** Desired status: kubebus.status.<partition>.<key> */
  status: (partition: number, key: ObjectKey) =>
    `${SUBJECT_ROOT}.status.p${partition}.${keyTokens(key)}`,
  statusOfPartition: (partition: number) => `${SUBJECT_ROOT}.status.p${partition}.>`,
  allStatus: `${SUBJECT_ROOT}.status.>`,

  /** What a controller did with an object: kubebus.outcomes.<controller>.<key> */
  outcome: (controller: string, key: ObjectKey) =>
    `${SUBJECT_ROOT}.outcomes.${encodeToken(controller)}.${keyTokens(key)}`,
  outcomesOf: (key: ObjectKey) => `${SUBJECT_ROOT}.outcomes.*.${keyTokens(key)}`,
  allOutcomes: `${SUBJECT_ROOT}.outcomes.>`,

  /** Dead letters: kubebus.dlq.<origin>.<key-or-reason tokens> */
  deadLetter: (origin: string, key: ObjectKey) =>
    `${SUBJECT_ROOT}.dlq.${encodeToken(origin)}.${keyTokens(key)}`,
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

/** A stable partition for an object (FNV-1a over its identity), in [0, partitions). */
export function partitionOf(key: ObjectKey, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(`${key.group}/${key.resource}/${key.namespace}/${key.name}`)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
