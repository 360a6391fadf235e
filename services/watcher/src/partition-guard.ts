// The watcher follows the work partition count its controller's reconcilers
// registered (agreements.ts). A watcher started before a repartition would go
// on marking objects in partitions no one consumes any more. So before a
// watch cursor is saved — the point after which a change is never published
// again — the count is read again: if it moved, the cursor is not saved and
// the watcher stops (not live). Restarted with the operator's new definition,
// it publishes everything since its last saved cursor to the right partitions.
import { agreementKeys, registeredPartitions } from '@kubebus/shared/bus';
import { ErrorCodes, KubebusError } from '@kubebus/shared/errors';
import type { KV } from '@nats-io/kv';

export class PartitionGuard {
  #moved: string | undefined;

  constructor(
    private readonly agreements: KV,
    private readonly controllers: readonly string[],
    private readonly partitions: number,
    private readonly onMoved: (reason: string) => void,
  ) {}

  /** Why this watcher stopped: the count it splits work by is no longer the registered one. */
  get moved(): string | undefined {
    return this.#moved;
  }

  /** Resolves if every controller's registered count is still this watcher's; throws if not. */
  async check(): Promise<void> {
    if (this.#moved === undefined)
      for (const controller of this.controllers) {
        const key = agreementKeys.work(controller);
        const registered = await registeredPartitions(this.agreements, key);
        if (registered === undefined || registered === this.partitions) continue;
        this.#moved = `${key} was repartitioned into ${registered} partitions, but this watcher splits work into ${this.partitions}: restart it with the operator's new definition`;
        this.onMoved(this.#moved);
        break;
      }
    if (this.#moved !== undefined) throw new KubebusError(ErrorCodes.InvalidConfig, this.#moved);
  }
}
