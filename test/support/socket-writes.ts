// The socket writes of a NATS connection, counted where nats-core hands its
// buffer to the socket: what the tests of one write per event-loop turn
// (ADR 0027) count.
import type { NatsConnection } from '@nats-io/nats-core';

/**
 * Counts the socket writes of a connection (nats-core's transport, not in its
 * typed API), but for a lone PONG: nats-core answers the server's PINGs (one
 * comes a moment after connecting) at once, outside its buffer.
 */
export function countWrites(nc: NatsConnection): {
  readonly count: () => number;
  /** each write's first 80 characters, for a failure's message */
  readonly seen: () => string;
  /** each write whole */
  readonly writes: () => readonly string[];
} {
  const socket = (nc as unknown as { protocol: { transport: { socket: { write: unknown } } } })
    .protocol.transport.socket;
  const write = socket.write as (...args: unknown[]) => boolean;
  const writes: string[] = [];
  socket.write = (...args: unknown[]) => {
    const [data] = args;
    const text = data instanceof Uint8Array ? new TextDecoder().decode(data) : String(data);
    if (text !== 'PONG\r\n') writes.push(text);
    return write.apply(socket, args);
  };
  return {
    count: () => writes.length,
    seen: () => writes.map((text) => text.slice(0, 80).replaceAll('\r\n', '|')).join(' / '),
    writes: () => writes,
  };
}
