// What each object's last state marked, by uid: the primary its controller
// owner reference names and what the `map` watches of its resource answered.
// A change marks what its previous state named as well as what its new state
// names, as controller-runtime maps the old and the new object of an update
// (EnqueueRequestForOwner, EnqueueRequestsFromMapFunc): a primary the object
// stops concerning (adopted by another owner, orphaned, its label moved or
// removed) hears of it too. A relist's tombstone carries neither owner
// references nor labels, so its delete is told from here alone. Only
// non-empty answers are kept: names, not objects.
import type { ChangeOp, KubeObject } from '@kubebus/shared/events';
import { keyString } from '@kubebus/shared/runtime';
import type { Mark } from './targets.js';

export class MappedMarks {
  readonly #byUid = new Map<string, readonly Mark[]>();

  /** @param answer the marks one state of an object names: its controller owner's, its `map` watches' */
  constructor(private readonly answer: (object: KubeObject) => Mark[]) {}

  /**
   * The object's last recorded state (seeded at start from KUBEBUS_EVENTS):
   * what it names is remembered without marking anything.
   */
  recall(object: KubeObject): void {
    this.#keep(object.metadata.uid, this.answer(object));
  }

  /** The marks of a change, the previous state's and the new one's, each once. */
  change(object: KubeObject, op: ChangeOp): Mark[] {
    const { uid } = object.metadata;
    const now = this.answer(object);
    const before = this.#byUid.get(uid) ?? [];
    // most objects name nothing, before or now: nothing to remember or merge
    if (now.length === 0 && before.length === 0) return now;
    if (op === 'delete') this.#byUid.delete(uid);
    else this.#keep(uid, now);
    const marks = new Map<string, Mark>();
    for (const mark of [...now, ...before])
      marks.set(`${mark.controller} ${keyString(mark.key)}`, mark);
    return [...marks.values()];
  }

  #keep(uid: string, marks: Mark[]): void {
    if (marks.length === 0) this.#byUid.delete(uid);
    else this.#byUid.set(uid, marks);
  }
}
