// One NATS connection per service, reconnecting for ever: NATS being down is a
// state to report (not ready before the first connection, kubebus_nats_connected
// after it: ADR 0036) and wait out, never a reason to exit.
import { usernamePasswordAuthenticator, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/mod.js';
import { backoffDelay } from '../runtime/backoff.js';
import { quietReplies } from './quiet-replies.js';
import { coalesceWrites } from './write-coalescing.js';
import { isTlsUnavailable, natsTlsOf, type BusTlsOptions } from './nats-tls.js';

/** filter_subjects and sync_interval need 2.10; older servers fail with obscure errors. */
export const MIN_NATS_VERSION = '2.10.0';

export interface BusConnectionOptions {
  readonly servers: string;
  /** the service's own NATS user (each service has one, with allow lists) */
  readonly user?: string;
  readonly pass?: string;
  /** a file holding the password, read again at every (re)connect (a mounted Secret) */
  readonly passFile?: string;
  /** TLS files; with any of them, or a `tls://` URL, the client refuses plaintext */
  readonly tls?: BusTlsOptions;
  readonly name: string;
}

export interface BusConnection {
  readonly nc: NatsConnection;
  /** true while connected */
  connected(): boolean;
}

/** How often one NATS error, repeated, is logged (the repeats counted in the next line). */
const ERROR_LOG_EVERY_MS = 60_000;

export async function connectBus(
  options: BusConnectionOptions,
  log: Logger,
): Promise<BusConnection> {
  const nc = await connectPatiently(options, log);
  // one socket write per event-loop turn (ADR 0027); a nats-core whose
  // internals differ from the tested one keeps its own, and says so
  if (!coalesceWrites(nc))
    log.info(
      'NATS writes not coalesced per event-loop turn: this nats-core differs from the one kubebus was tested with',
    );
  // an answered request ends without an Error built and dropped (quiet-replies.ts)
  if (!quietReplies(nc))
    log.info(
      'NATS replies not settled quietly: this nats-core differs from the one kubebus was tested with',
    );
  const version = nc.info?.version ?? '0.0.0';
  if (compareVersions(version, MIN_NATS_VERSION) < 0) {
    await nc.close();
    throw new KubebusError(
      ErrorCodes.UnsupportedServer,
      `nats-server ${version} at ${options.servers} is too old: kubebus needs nats-server >= ${MIN_NATS_VERSION} with JetStream`,
    );
  }
  let connected = true;
  // a refused password is retried every half second: the same error once a minute, counted
  const errors = { last: '', at: 0, repeated: 0 };
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
        case 'error': {
          const text = status.error.message;
          const now = Date.now();
          if (text === errors.last && now - errors.at < ERROR_LOG_EVERY_MS) {
            errors.repeated++;
            break;
          }
          log.error(
            { err: status.error, ...(errors.repeated > 0 ? { repeated: errors.repeated } : {}) },
            'nats error',
          );
          Object.assign(errors, { last: text, at: now, repeated: 0 });
          break;
        }
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

/**
 * Connects, and keeps trying while NATS is unreachable or refuses the user:
 * the service stays up (and not ready) with one log line per attempt, and
 * picks up a changed password file on the next try.
 */
async function connectPatiently(
  options: BusConnectionOptions,
  log: Logger,
): Promise<NatsConnection> {
  const password = () =>
    options.passFile === undefined
      ? (options.pass ?? '')
      : readFileSync(options.passFile, 'utf8').trim();
  const auth =
    options.user === undefined
      ? {}
      : { authenticator: usernamePasswordAuthenticator(options.user, password) };
  const tls = natsTlsOf(options.servers, options.tls);
  for (let attempt = 0; ; attempt++) {
    try {
      return await connect({
        servers: options.servers.split(','),
        name: options.name,
        ...auth,
        ...(tls === undefined ? {} : { tls }),
        maxReconnectAttempts: -1,
        // a refused password is retried with the file read again (a rotation where the
        // server got the new password first), not the connection closed after two
        ignoreAuthErrorAbort: true,
        reconnectTimeWait: 500,
        pingInterval: 10_000,
        // An Error (with its stack) built for every request only to improve a
        // rare failure's trace cost ~17% of a reconciler's CPU (bench --profile).
        noAsyncTraces: true,
      });
    } catch (error) {
      if (isTlsUnavailable(error)) {
        // Waiting cannot make plaintext safe: refuse to start, never downgrade.
        throw new KubebusError(
          ErrorCodes.InvalidConfig,
          `NATS at ${options.servers} does not offer TLS, which kubebus requires (a tls:// URL or KUBEBUS_NATS_CA): enable TLS on the server, or point KUBEBUS_NATS_URL at one that has it`,
          { cause: error },
        );
      }
      const retryInMs = backoffDelay({ baseMs: 500, capMs: 30_000 }, attempt);
      const reason = (error as Error).message;
      const who = options.user === undefined ? 'no user' : `user ${options.user}`;
      const fields = { retryInMs, attempt: attempt + 1 };
      // a refusal or a failed handshake is a configuration to fix; a server not up yet is waited out
      if (/authori[sz]ation|authentication|permission/i.test(reason))
        log.error(fields, `NATS refused ${who}: ${reason}; check the user and password (retrying)`);
      else if (/certificate|self.signed|handshake|ssl|tls/i.test(reason))
        log.error(
          fields,
          `TLS with NATS at ${options.servers} failed: ${reason}; check KUBEBUS_NATS_CA (and the client certificate) (retrying)`,
        );
      else log.warn(fields, `cannot reach NATS at ${options.servers}: ${reason} (retrying)`);
      await sleep(retryInMs);
    }
  }
}

/** Whether the connected server is at least `version` (features such as batched direct gets). */
export function serverAtLeast(nc: NatsConnection, version: string): boolean {
  return compareVersions(nc.info?.version ?? '0.0.0', version) >= 0;
}

function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split(/[.-]/)
      .slice(0, 3)
      .map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
