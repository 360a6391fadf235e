// One NATS connection per service, reconnecting for ever: NATS being down is a
// state to report (not ready) and wait out, never a reason to exit.
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '../obs/mod.js';

export interface BusConnectionOptions {
  readonly servers: string;
  /** the service's own NATS user (each service has one, with allow lists) */
  readonly user?: string;
  readonly pass?: string;
  readonly name: string;
}

export interface BusConnection {
  readonly nc: NatsConnection;
  /** true while connected */
  connected(): boolean;
}

export async function connectBus(
  options: BusConnectionOptions,
  log: Logger,
): Promise<BusConnection> {
  const nc = await connect({
    servers: options.servers.split(','),
    name: options.name,
    ...(options.user === undefined ? {} : { user: options.user }),
    ...(options.pass === undefined ? {} : { pass: options.pass }),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
  });
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      switch (status.type) {
        case 'disconnect':
          connected = false;
          log.warn({ server: status.server }, 'nats disconnected');
          break;
        case 'reconnect':
          connected = true;
          log.info({ server: status.server }, 'nats reconnected');
          break;
        case 'error':
          log.error({ err: status.error }, 'nats error');
          break;
        case 'close':
          connected = false;
          break;
        case 'staleConnection':
        case 'slowConsumer':
          log.warn({ status: status.type }, 'nats connection trouble');
          break;
        case 'forceReconnect':
        case 'ldm':
        case 'ping':
        case 'reconnecting':
        case 'update':
          break;
      }
    }
  })();
  return { nc, connected: () => connected && !nc.isClosed() };
}
