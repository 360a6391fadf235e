// A status intent: the status a reconciler wants on an object, for the
// generation it observed. The status writer applies the latest one per object.
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { z } from 'zod';
import { ObjectKeySchema } from '../kube/names.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { PublishedStatus, type OwnStatus } from './published-status.js';
import { partitionOf, subjects } from './subjects.js';

export const StatusIntentSchema = z.object({
  /** checked by Kubernetes' naming rules: the writer builds the /status path from it */
  key: ObjectKeySchema,
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  /** the object's incarnation: an intent never applies to a re-created object */
  uid: z.string().min(1),
  /** the metadata.generation the reconciler saw; also written as status.observedGeneration */
  observedGeneration: z.number().int().nonnegative(),
  status: z.record(z.string(), z.unknown()),
  traceparent: z.string().optional(),
  reconcileId: z.string().optional(),
  time: z.string(),
});

export type StatusIntent = z.infer<typeof StatusIntentSchema>;

export function encodeStatusIntent(
  intent: Omit<StatusIntent, 'key'> & { key: ObjectKey },
): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ ...intent, key: { ...intent.key } }));
}

/**
 * Publishes a controller's status intents to KUBEBUS_STATUS, one pending per
 * object (latest wins), on its own subjects (kubebus.status.<controller>.…):
 * only its status writers consume them.
 */
export class StatusPublisher {
  readonly #published = new PublishedStatus();

  constructor(
    private readonly js: JetStreamClient,
    private readonly controller: string,
    private readonly partitions: number,
  ) {}

  /**
   * Publishes the intent — unless `current` (the object's status as the
   * reconciler read it) shows it in place, or shows what it showed when this
   * process published the same intent moments ago (published-status.ts): a
   * re-reconcile then costs the status writer nothing. Without `current`,
   * always publishes (and forgets what it published before for the object).
   */
  async publish(
    intent: Omit<StatusIntent, 'key' | 'time'> & { key: ObjectKey },
    current?: Record<string, unknown>,
  ): Promise<void> {
    if (current !== undefined && this.#published.redundant(intent, current)) return;
    const headers = natsHeaders();
    headers.set('content-type', 'application/json');
    if (intent.traceparent !== undefined) headers.set('traceparent', intent.traceparent);
    const subject = subjects.status(
      this.controller,
      partitionOf(intent.key, this.partitions),
      intent.key,
    );
    await this.js
      .publish(subject, encodeStatusIntent({ ...intent, time: new Date().toISOString() }), {
        headers,
      })
      .catch((error: unknown) => {
        this.#published.forget(intent.uid);
        throw error;
      });
    // one published without `current` (a Degraded status) is a newer word than the memo
    if (current === undefined) this.#published.forget(intent.uid);
    else this.#published.published(intent, current);
  }

  /** The object's status as this process' own last intent for it makes it (published-status.ts). */
  own(object: {
    readonly uid: string;
    readonly generation: number;
    readonly status: Record<string, unknown>;
  }): OwnStatus | undefined {
    return this.#published.own(object);
  }
}
