// A status that changes at every reconcile (a counter, the time of the last
// check) loops: its write is a change of the object, which reconciles it
// again, which writes again — as fast as the bus goes, for ever, as in
// controller-runtime without a predicate. Nothing fails, so nothing says so;
// this notices rounds that only the object's own change started, that read
// the same inputs as the round before (the object's spec, labels and
// annotations, and every object read through ctx, by resourceVersion) and
// still change its status at a generation already written — a status that
// is a function of nothing that changed — and names the fields.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@kubebus/shared/events';
import type { Status } from './status.js';

/** Rounds in a row before the loop is said: a few are an operator converging. */
export const LOOP_ROUNDS = 10;

/** The Warning Event's reason. */
export const STATUS_LOOP = 'StatusChangesEveryReconcile';

/** What a condition says, without the times setCondition keeps or moves. */
function said(condition: unknown): unknown {
  if (typeof condition !== 'object' || condition === null) return condition;
  const { status, reason, message } = condition as Record<string, unknown>;
  return [status, reason, message];
}

function conditionsByType(status: Status): Map<string, unknown> {
  const list = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]) : [];
  return new Map(
    list.map((c) => [String((c as Record<string, unknown> | null)?.['type']), said(c)]),
  );
}

/** The status fields `after` writes differently from `before`, as `status.<field>`, sorted. */
export function changedStatusFields(before: Status, after: Status): string[] {
  const changed = new Set<string>();
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    // the writer's own: observedGeneration follows the generation, not the reconcile
    if (field === 'observedGeneration' || field === 'conditions' || !(field in after)) continue;
    // by value: the apiserver answers map keys sorted, the schema in its own order
    if (!isDeepStrictEqual(before[field], after[field])) changed.add(`status.${field}`);
  }
  const was = conditionsByType(before);
  for (const [type, now] of conditionsByType(after))
    if (!isDeepStrictEqual(was.get(type), now)) changed.add(`status.conditions[${type}]`);
  return [...changed].sort();
}

/** Objects remembered at most (a deleted one's entry goes with the next clear). */
const MAX_REMEMBERED = 10_000;

/**
 * What a round read, as one string: the object's generation, labels and
 * annotations (not its status, which the loop itself changes, nor its
 * resourceVersion, which each status write moves), and each object read
 * through ctx by kind, name and resourceVersion.
 */
export function roundInputs(object: KubeObject, read: ReadonlySet<string>): string {
  // a digest: a list of thousands read is kept as 64 characters
  return createHash('sha256')
    .update(JSON.stringify([inputsOf(object), [...read].sort()]))
    .digest('hex');
}

/** What of the object a round takes in: not its status or resourceVersion, which the loop moves. */
function inputsOf(object: KubeObject): unknown {
  const { generation, labels, annotations } = object.metadata;
  return [generation, labels ?? {}, annotations ?? {}];
}

/**
 * One object ctx handed the operator, as a round's input: by resourceVersion,
 * but the object being reconciled (read again through ctx) by what
 * roundInputs takes of it — its own status write moves its resourceVersion.
 */
export function readStamp(owner: KubeObject, read: KubeObject): string {
  if (read.metadata.uid === owner.metadata.uid) return `self:${JSON.stringify(inputsOf(read))}`;
  const { namespace, name, resourceVersion } = read.metadata;
  return `${read.apiVersion}/${read.kind}/${namespace ?? ''}/${name}@${resourceVersion}`;
}

/** Counts, per object, the rounds in a row that loop; says each loop once. */
export class StatusLoops {
  readonly #rounds = new Map<string, { count: number; inputs: string }>();
  readonly #said = new Set<string>();
  /** rounds begun and not yet observed */
  readonly #unfinished = new Set<string>();

  /**
   * One successful round. `ownChange`: only the object's own change started it
   * (not a child's, a requeue or a resync); `inputs`: what it read
   * (roundInputs), asked only for such a round. Answers the fields that keep changing the first time the
   * rounds in a row reach LOOP_ROUNDS.
   */
  observe(
    object: KubeObject,
    next: Status,
    ownChange: boolean,
    inputs: () => string,
  ): string[] | undefined {
    const { uid } = object.metadata;
    this.#unfinished.delete(uid);
    const current = object['status'];
    const before =
      typeof current === 'object' && current !== null ? (current as Status) : ({} as Status);
    // a generation not yet written: a spec change, the status follows it once
    const written = before['observedGeneration'] === (object.metadata.generation ?? 0);
    const fields = written && ownChange ? changedStatusFields(before, next) : [];
    const last = this.#rounds.get(uid);
    if (fields.length === 0) {
      this.#rounds.delete(uid);
      return undefined;
    }
    if (this.#rounds.size >= MAX_REMEMBERED) this.#rounds.clear();
    // another input than the round before (a child's change folded into this mark): the
    // status may follow it; counted from here
    const read = inputs();
    const rounds = last?.inputs === read ? last.count + 1 : 1;
    this.#rounds.set(uid, { count: rounds, inputs: read });
    if (rounds < LOOP_ROUNDS || this.#said.has(uid)) return undefined;
    // at worst a loop is said again
    if (this.#said.size >= MAX_REMEMBERED) this.#said.clear();
    this.#said.add(uid);
    return fields;
  }

  /**
   * A round begins. One begun before that never reached `observe` failed
   * (its code, its status schema, a prune, a revoked lease): the next is not
   * "in a row" with the one before it.
   */
  begun(uid: string): void {
    if (this.#unfinished.has(uid)) this.#rounds.delete(uid);
    if (this.#unfinished.size >= MAX_REMEMBERED) this.#unfinished.clear();
    this.#unfinished.add(uid);
  }
}

/** What the log and the Event say. */
export function loopNote(fields: readonly string[]): string {
  return `${fields.join(', ')} changed at each of ${String(LOOP_ROUNDS)} reconciles in a row that its own status write started: each write reconciles the object again, without end. Write a field only when what it reports changes (the time of the last change, not of the last check), or count elsewhere (a metric)`;
}
