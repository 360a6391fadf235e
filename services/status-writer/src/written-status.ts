// What the status writer knows of an object without asking the apiserver: the
// object's last recorded state on the bus (KUBEBUS_EVENTS), corrected by the
// answer to the writer's own last status patch while the bus has not caught
// up with it — that is, while the bus shows the revision the writer judged
// before its first patch of a run of them, or one of the revisions its own
// patches made since (an older own revision says less than the last patch:
// judged by it, a status flipped back would look written already). Any other
// revision is the bus' word: a change someone else made (a status they wrote
// is then repaired, not hidden behind the writer's memory). resourceVersions
// are compared for equality only (they are opaque).
import type { KubeObject } from '@kubebus/shared/events';
import { keyString, type ObjectKey } from '@kubebus/shared/runtime';

interface Written {
  readonly uid: string;
  readonly generation: number;
  readonly status: Record<string, unknown>;
  /** the revision the first patch of this run was judged against */
  readonly before: string | undefined;
  /** the revisions the run's own patches made, the last one last (a few) */
  readonly own: readonly string[];
}

/** Own revisions kept per object: more patches than this before the bus catches up is unheard of. */
const OWN_REVISIONS = 16;

export class WrittenStatus {
  readonly #written = new Map<string, Written>();

  constructor(private readonly capacity = 20_000) {}

  /** Remembers the object as the apiserver answered a status patch judged against revision `before`. */
  remember(key: ObjectKey, object: KubeObject, before: string | undefined): void {
    const id = keyString(key);
    const last = this.#written.get(id);
    // judged against this writer's own view (the bus had not caught up): the run goes on
    const goesOn = last !== undefined && last.uid === object.metadata.uid && knows(last, before);
    this.#written.delete(id); // re-insert: the map's order is the LRU order
    this.#written.set(id, {
      uid: object.metadata.uid,
      generation: object.metadata.generation ?? 0,
      status: (object['status'] ?? {}) as Record<string, unknown>,
      before: goesOn ? last.before : before,
      own: [...(goesOn ? last.own : []), object.metadata.resourceVersion].slice(-OWN_REVISIONS),
    });
    if (this.#written.size > this.capacity) {
      const oldest = this.#written.keys().next().value;
      if (oldest !== undefined) this.#written.delete(oldest);
    }
  }

  forget(key: ObjectKey): void {
    this.#written.delete(keyString(key));
  }

  /** The freshest view of the object: the recorded one, with the status this writer wrote last. */
  current(key: ObjectKey, recorded: KubeObject): KubeObject {
    const written = this.#written.get(keyString(key));
    if (
      written === undefined ||
      written.uid !== recorded.metadata.uid ||
      !knows(written, recorded.metadata.resourceVersion)
    )
      return recorded;
    return {
      ...recorded,
      metadata: {
        ...recorded.metadata,
        generation: Math.max(recorded.metadata.generation ?? 0, written.generation),
      },
      status: written.status,
    };
  }
}

/** Whether the revision is the run's starting point or one of its own patches. */
function knows(written: Written, revision: string | undefined): boolean {
  return revision !== undefined && (revision === written.before || written.own.includes(revision));
}
