// Watch cursors in NATS KV: the resourceVersion up to which every change of a
// watch scope is durably in JetStream. A restart resumes from it.
import { Buckets } from '@kubebus/shared/bus';
import type { KV } from '@nats-io/kv';
import { createHash } from 'node:crypto';
import type { WatchedResource } from './targets.js';

export interface Cursor {
  readonly resourceVersion: string;
  readonly updatedAt: string;
  readonly by: string;
}

export function cursorKey(
  resource: WatchedResource,
  namespace: string,
  labelSelector?: string,
): string {
  // KV keys allow [-/_=.a-zA-Z0-9]; names here are DNS labels, '_' marks "none".
  const selector = labelSelector
    ? createHash('sha256').update(labelSelector).digest('hex').slice(0, 16)
    : '_';
  return [resource.resource, resource.group || '_core', namespace || '_all', selector].join('.');
}

/**
 * Cursors of one operator's watcher, under `<operator>.` (ADR 0015: its NATS
 * user may write `$KV.kubebus_cursors.<operator>.>` and no other operator's).
 */
export class CursorStore {
  constructor(
    private readonly kv: KV,
    private readonly watcherId: string,
    private readonly operator: string,
    /** asked before every write; a cursor is not saved if it throws (partition-guard.ts) */
    private readonly beforeWrite: () => Promise<void> = async () => {},
  ) {}

  static bucket = Buckets.cursors;

  /** The bucket key of a cursor key (cursorKey) of this operator. */
  keyOf(key: string): string {
    return `${this.operator}.${key}`;
  }

  /**
   * The cursor, or before the first write under the operator's name, the one
   * the layout before kept under the bare key (read once on upgrade, never
   * written): a restart after the upgrade resumes instead of relisting.
   */
  async read(key: string): Promise<Cursor | undefined> {
    return (await this.#get(this.keyOf(key))) ?? (await this.#get(key));
  }

  async #get(key: string): Promise<Cursor | undefined> {
    const entry = await this.kv.get(key);
    if (entry === null || entry.operation !== 'PUT') return undefined;
    try {
      return entry.json<Cursor>();
    } catch {
      return undefined;
    }
  }

  async write(key: string, resourceVersion: string): Promise<void> {
    await this.beforeWrite();
    const cursor: Cursor = {
      resourceVersion,
      updatedAt: new Date().toISOString(),
      by: this.watcherId,
    };
    await this.kv.put(this.keyOf(key), JSON.stringify(cursor));
  }

  async clear(key: string): Promise<void> {
    await this.kv.delete(this.keyOf(key));
  }
}
