// What the status writer knows of an object without asking the apiserver: the
// object's last recorded state on the bus (KUBEBUS_EVENTS), corrected by the
// answer to the writer's own last status patch while the bus has not caught
// up with it — that is, while the bus still shows the very revision the
// writer judged before its patch. Any other revision is the bus' word: it
// holds the patch, or a change someone else made after it (a status they
// wrote is then repaired, not hidden behind the writer's memory); a revision
// from between the two costs at most a redundant patch. resourceVersions are
// compared for equality only (they are opaque).
import type { KubeObject } from '@kubebus/shared/events';
import { keyString, type ObjectKey } from '@kubebus/shared/runtime';

interface Written {
  readonly uid: string;
  readonly generation: number;
  readonly status: Record<string, unknown>;
  /** the revision the patch was judged against */
  readonly before: string | undefined;
}

export class WrittenStatus {
  readonly #written = new Map<string, Written>();

  constructor(private readonly capacity = 20_000) {}

  /** Remembers the object as the apiserver answered a status patch judged against revision `before`. */
  remember(key: ObjectKey, object: KubeObject, before: string | undefined): void {
    const id = keyString(key);
    this.#written.delete(id); // re-insert: the map's order is the LRU order
    this.#written.set(id, {
      uid: object.metadata.uid,
      generation: object.metadata.generation ?? 0,
      status: (object['status'] ?? {}) as Record<string, unknown>,
      before,
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
      written.before === undefined ||
      written.before !== recorded.metadata.resourceVersion
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
