// nats-core writes its outbound buffer to the socket at the end of the
// JavaScript task that filled it (a microtask): each HTTP/2 answer, each NATS
// message handled, is its own socket write and, under TLS, its own record —
// 1.6 commands per write in a bench run, and each write wakes a read loop of
// nats-server. Deferred to the check phase of the event loop (setImmediate),
// the write takes everything the callbacks of one I/O poll produced, with no
// timer (ADR 0027); after what gathers the turn's requests (turn-end.ts).
import type { NatsConnection } from '@nats-io/nats-core';
import { writeAtTurnEnd } from './turn-end.js';

/** The part of nats-core's protocol handler this relies on (not in its typed API). */
interface ProtocolInternals {
  flushPending(): void;
  close(error?: unknown): Promise<void>;
  readonly outbound: { size(): number };
  readonly pendingLimit: number;
}

/** Marks a protocol handler already patched: a second call would defer each write twice. */
const COALESCED = Symbol('kubebus.writesCoalesced');

function protocolOf(nc: NatsConnection): unknown {
  return (nc as unknown as { protocol?: unknown }).protocol;
}

function isProtocol(value: unknown): value is ProtocolInternals {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof ProtocolInternals, unknown>>;
  return (
    typeof candidate.flushPending === 'function' &&
    typeof candidate.close === 'function' &&
    typeof candidate.pendingLimit === 'number' &&
    typeof (candidate.outbound as { size?: unknown } | undefined)?.size === 'function'
  );
}

/** Whether the connection writes once per event-loop turn. */
export function writesCoalesced(nc: NatsConnection): boolean {
  const protocol = protocolOf(nc);
  return typeof protocol === 'object' && protocol !== null && COALESCED in protocol;
}

/**
 * Makes the connection write once per event-loop turn. Returns whether it
 * does: a nats-core whose internals differ keeps its own behaviour.
 */
export function coalesceWrites(nc: NatsConnection): boolean {
  if (writesCoalesced(nc)) return true;
  const protocol = protocolOf(nc);
  if (!isProtocol(protocol)) return false;
  const flushNow = protocol.flushPending.bind(protocol);
  const close = protocol.close.bind(protocol);
  let scheduled = false;
  let closing = false;
  protocol.flushPending = () => {
    // past the buffer's limit nats-core writes at once, and so does a closing
    // connection: a write deferred past the close would find the socket gone
    if (closing || protocol.outbound.size() >= protocol.pendingLimit) {
      flushNow();
      return;
    }
    if (scheduled) return;
    scheduled = true;
    writeAtTurnEnd(() => {
      scheduled = false;
      flushNow();
    });
  };
  protocol.close = (error?: unknown) => {
    closing = true;
    flushNow();
    return close(error);
  };
  Object.defineProperty(protocol, COALESCED, { value: true });
  return true;
}
