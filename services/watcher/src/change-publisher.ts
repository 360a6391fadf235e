// Turns one change into its messages — the CloudEvent in KUBEBUS_EVENTS, then a
// work mark per interested controller in KUBEBUS_WORK — and hands them to the
// ordered publisher. A change the server keeps rejecting is parked in the DLQ
// with the reason: reported, never silently dropped.
import {
  MAX_CAUSE,
  OrderedPublisher,
  deadLetter,
  encodeWorkMark,
  partitionOf,
  subjects,
  type OutgoingMessage,
  type Submitted,
  type WorkReason,
} from '@kubebus/shared/bus';
import { ErrorCodes, hasCode } from '@kubebus/shared/errors';
import {
  byReference,
  encodeStructured,
  kubeEvent,
  type ChangeOp,
  type KubeObject,
  type SendReason,
} from '@kubebus/shared/events';
import type { ObjectKey } from '@kubebus/shared/kube';
import { keyString } from '@kubebus/shared/runtime';
import { startTrace, type Logger, type Spans } from '@kubebus/shared/obs';
import type { WatcherMetrics } from './metrics.js';
import { sanitize } from './sanitize.js';
import type { WatchedResource, WatchTargets } from './targets.js';

/** Room kept for headers and the publish protocol below the server's max_payload. */
const PAYLOAD_MARGIN = 8 * 1024;

export interface ChangePublisherDeps {
  readonly publisher: OrderedPublisher;
  readonly targets: WatchTargets;
  readonly partitions: number;
  /** the apiserver URL, the CloudEvents `source` */
  readonly source: string;
  readonly maxPayload: () => number;
  readonly log: Logger;
  readonly metrics: WatcherMetrics;
  /** a span per published change (exported when tracing is configured) */
  readonly spans: Spans;
  /** who its dead letters say parked them (origins.watcher of the operator) */
  readonly origin: string;
}

export class ChangePublisher {
  constructor(private readonly deps: ChangePublisherDeps) {}

  /**
   * Waits for room in the publish window, then returns the change's completion
   * (resolves once stored, or once parked in the DLQ).
   */
  async publish(
    resource: WatchedResource,
    raw: KubeObject,
    op: ChangeOp,
    reason: SendReason,
  ): Promise<Submitted> {
    const object = sanitize(resource, raw);
    // a primary's references first: a change to what it names now marks it
    this.deps.targets.observe(resource, object, op);
    // the trace of this change starts here: its first span is the publish
    const span = this.deps.spans.start(`publish ${resource.resource}`, 'producer', undefined, {
      'kubebus.op': op,
      'kubebus.reason': reason,
      'k8s.resource': resource.resource,
      'k8s.namespace.name': raw.metadata.namespace ?? '',
      'k8s.object.name': raw.metadata.name,
    });
    const { traceparent } = span;
    let event = kubeEvent({
      resource,
      object,
      op,
      reason,
      source: this.deps.source,
      time: new Date(),
      traceparent,
    });
    let encoded = encodeStructured(event);
    if (encoded.payload.byteLength > this.deps.maxPayload() - PAYLOAD_MARGIN) {
      event = byReference(event);
      encoded = encodeStructured(event);
      this.deps.metrics.byReference.inc();
      this.deps.log.info(
        { eventId: event.id, bytes: encoded.payload.byteLength },
        'object too large, published by reference',
      );
    }
    const key: ObjectKey = {
      group: resource.group,
      resource: resource.resource,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
    };
    let messages: OutgoingMessage[];
    try {
      messages = this.#messagesOf(key, resource, object, op, event, encoded, reason, traceparent);
    } catch (error) {
      // a key whose subject would be too long to publish (kube names that are
      // not DNS names, say RBAC's): parked with the reason, the watch goes on
      if (!hasCode(error, ErrorCodes.InvalidKey)) throw error;
      span.end((error as Error).message);
      return { completion: this.#park(key, event.id, traceparent, error) };
    }
    this.deps.log.debug(
      {
        eventId: event.id,
        traceparent,
        op,
        reason,
        resource: key.resource,
        namespace: key.namespace,
        name: key.name,
      },
      'publishing change',
    );
    const { completion } = await this.deps.publisher.submit(messages[0]?.subject ?? '', messages);
    return {
      completion: completion.then(
        () => {
          span.end();
        },
        (error: unknown) => {
          span.end(error instanceof Error ? error.message : String(error));
          return this.#park(key, event.id, traceparent, error);
        },
      ),
    };
  }

  #messagesOf(
    key: ObjectKey,
    resource: WatchedResource,
    object: KubeObject,
    op: ChangeOp,
    event: { readonly id: string },
    encoded: { readonly payload: Uint8Array; readonly headers: Readonly<Record<string, string>> },
    reason: SendReason,
    traceparent: string,
  ): OutgoingMessage[] {
    return [
      {
        subject: subjects.event(key),
        payload: encoded.payload,
        headers: { ...encoded.headers, traceparent },
        msgId: event.id,
      },
      ...this.deps.targets.marksFor(resource, object, op).map((mark) =>
        this.#mark(mark.controller, mark.key, {
          reason: sameKey(mark.key, key) ? reason : 'owned',
          eventId: event.id,
          ...(sameKey(mark.key, key) ? {} : { cause: causeOf(key) }),
          traceparent,
          // the marked object in the id: one change that concerns several primaries (a Secret
          // several name) is one mark each, not one the stream keeps and the rest duplicates
          msgId: sameKey(mark.key, key)
            ? `${mark.controller}/${event.id}`
            : `${mark.controller}/${event.id}/${keyString(mark.key)}`,
        }),
      ),
    ];
  }

  /** A work mark alone (the periodic resync): the object did not change. */
  async markOnly(controller: string, key: ObjectKey, msgId: string): Promise<Submitted> {
    const traceparent = startTrace();
    const mark = this.#mark(controller, key, { reason: 'resync', traceparent, msgId });
    const { completion } = await this.deps.publisher.submit(mark.subject, [mark]);
    return {
      completion: completion.catch((error: unknown) => this.#park(key, msgId, traceparent, error)),
    };
  }

  #mark(
    controller: string,
    key: ObjectKey,
    fields: {
      reason: WorkReason | SendReason;
      eventId?: string;
      cause?: string;
      traceparent: string;
      msgId: string;
    },
  ): OutgoingMessage {
    const partition = partitionOf(key, this.deps.partitions);
    return {
      subject: subjects.work(controller, partition, key),
      payload: encodeWorkMark({
        key,
        reason: fields.reason,
        ...(fields.eventId === undefined ? {} : { eventId: fields.eventId }),
        ...(fields.cause === undefined ? {} : { cause: fields.cause }),
        traceparent: fields.traceparent,
        time: new Date().toISOString(),
      }),
      headers: { 'content-type': 'application/json', traceparent: fields.traceparent },
      // the partition in the id: a watcher still on an old count (a repartition) must not
      // make the work stream drop the same change's mark to its right partition as a duplicate
      msgId: `${fields.msgId}/p${partition}`,
    };
  }

  async #park(key: ObjectKey, eventId: string, traceparent: string, error: unknown): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    const code = ErrorCodes.PublishFailed;
    this.deps.metrics.deadLetters.inc({ code });
    this.deps.log.error(
      { eventId, traceparent, err: error },
      'change could not be published; parked in the DLQ',
    );
    const record = deadLetter({
      origin: this.deps.origin,
      key,
      reason,
      code,
      eventId,
      attempts: 0,
      traceparent,
    });
    const subject = subjects.deadLetter(this.deps.origin, key);
    const { completion } = await this.deps.publisher.submit(`dlq:${subject}`, [
      {
        subject,
        payload: new TextEncoder().encode(JSON.stringify(record)),
        headers: { 'content-type': 'application/json', traceparent },
        msgId: `dlq/${eventId}`,
      },
    ]);
    await completion.catch((dlqError: unknown) => {
      this.deps.log.fatal({ eventId, err: dlqError }, 'the DLQ rejected a dead letter');
    });
  }
}

function sameKey(a: ObjectKey, b: ObjectKey): boolean {
  return (
    a.group === b.group &&
    a.resource === b.resource &&
    a.namespace === b.namespace &&
    a.name === b.name
  );
}

/** How a work mark names the object whose change caused it: `secrets shop/db`, `deployments.apps web`. */
function causeOf(key: ObjectKey): string {
  const resource = key.group === '' ? key.resource : `${key.resource}.${key.group}`;
  const cause = `${resource} ${key.namespace === '' ? '' : `${key.namespace}/`}${key.name}`;
  // what the mark's schema takes: a diagnostic never costs the mark
  return cause.length <= MAX_CAUSE ? cause : `${cause.slice(0, MAX_CAUSE - 1)}…`;
}
