// Reads of the bus issued in the same turn of the event loop, sent as one
// batched request: an operator that applies three objects at once
// (Promise.all of ctx.apply) reads their recorded states with one direct get
// instead of three, without having to know about batching — and so do the
// reconciles running side by side whose reads fall in the same turn. The
// batch is sent before the turn's NATS write, and goes out with it (turn-end.ts).
import type { KubeObject } from '../events/kube-object.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { ObjectReader } from './object-reader.js';
import { gatherAtTurnEnd } from './turn-end.js';

interface Waiting {
  readonly key: ObjectKey;
  readonly resolve: (object: KubeObject | undefined) => void;
  readonly reject: (error: unknown) => void;
}

export class BatchingReader {
  #waiting: Waiting[] = [];

  constructor(private readonly reader: Pick<ObjectReader, 'readAll'>) {}

  read(key: ObjectKey): Promise<KubeObject | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.length === 0) gatherAtTurnEnd(() => void this.#flush());
      this.#waiting.push({ key, resolve, reject });
    });
  }

  readAll(keys: readonly ObjectKey[]): Promise<(KubeObject | undefined)[]> {
    return Promise.all(keys.map((key) => this.read(key)));
  }

  async #flush(): Promise<void> {
    const batch = this.#waiting;
    this.#waiting = [];
    try {
      const objects = await this.reader.readAll(batch.map((waiting) => waiting.key));
      batch.forEach((waiting, index) => {
        waiting.resolve(objects[index]);
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
