// A status that changes at every reconcile (a counter, the time of the last
// check) loops: its write is a change of the object, which reconciles it
// again, which writes again — as fast as the bus goes, for ever, as in
// controller-runtime without a predicate. Nothing fails, so nothing says so;
// this notices rounds that only the object's own change started and that
// still change its status at a generation already written, and names the
// fields that keep changing.
import type { KubeObject } from '@kubebus/shared/events';
import type { Status } from './status.js';

/** Rounds in a row before the loop is said: a few are an operator converging. */
export const LOOP_ROUNDS = 10;

/** The Warning Event's reason. */
export const STATUS_LOOP = 'StatusChangesEveryReconcile';

/** What a condition says, without the times setCondition keeps or moves. */
function said(condition: unknown): string {
  if (typeof condition !== 'object' || condition === null) return JSON.stringify(condition);
  const { status, reason, message } = condition as Record<string, unknown>;
  return JSON.stringify([status, reason, message]);
}

function conditionsByType(status: Status): Map<string, string> {
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
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field]))
      changed.add(`status.${field}`);
  }
  const was = conditionsByType(before);
  for (const [type, now] of conditionsByType(after))
    if (was.get(type) !== now) changed.add(`status.conditions[${type}]`);
  return [...changed].sort();
}

/** Objects remembered at most (a deleted one's entry goes with the next clear). */
const MAX_REMEMBERED = 10_000;

/** Counts, per object, the rounds in a row that loop; says each loop once. */
export class StatusLoops {
  readonly #rounds = new Map<string, number>();
  readonly #said = new Set<string>();

  /**
   * One successful round. `ownChange`: only the object's own change started it
   * (not a child's, a requeue or a resync). Answers the fields that keep
   * changing the first time the rounds in a row reach LOOP_ROUNDS.
   */
  observe(object: KubeObject, next: Status, ownChange: boolean): string[] | undefined {
    const { uid } = object.metadata;
    const current = object['status'];
    const before =
      typeof current === 'object' && current !== null ? (current as Status) : ({} as Status);
    // a generation not yet written: a spec change, the status follows it once
    const written = before['observedGeneration'] === (object.metadata.generation ?? 0);
    const fields = written && ownChange ? changedStatusFields(before, next) : [];
    if (fields.length === 0) {
      this.#rounds.delete(uid);
      return undefined;
    }
    if (this.#rounds.size >= MAX_REMEMBERED) this.#rounds.clear();
    const rounds = (this.#rounds.get(uid) ?? 0) + 1;
    this.#rounds.set(uid, rounds);
    if (rounds < LOOP_ROUNDS || this.#said.has(uid)) return undefined;
    // at worst a loop is said again
    if (this.#said.size >= MAX_REMEMBERED) this.#said.clear();
    this.#said.add(uid);
    return fields;
  }
}

/** What the log and the Event say. */
export function loopNote(fields: readonly string[]): string {
  return `${fields.join(', ')} changed at each of ${String(LOOP_ROUNDS)} reconciles in a row that its own status write started: each write reconciles the object again, without end. Write a field only when what it reports changes (the time of the last change, not of the last check), or count elsewhere (a metric)`;
}
