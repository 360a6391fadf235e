// When the client must speak TLS to NATS, and with which files. A `tls://` URL
// or a configured CA makes TLS required: nats.js then refuses a server that
// does not offer it, instead of silently carrying on in plaintext.
import type { TlsOptions } from '@nats-io/nats-core';
import { accessSync, constants } from 'node:fs';
import { ErrorCodes, KubebusError } from '../errors/mod.js';

export interface BusTlsOptions {
  /** PEM file of the CA that signed the servers' certificates (KUBEBUS_NATS_CA) */
  readonly caFile?: string;
  /** PEM client certificate and key, for servers that verify clients (mTLS) */
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** Whether any of the comma-separated server URLs asks for TLS. */
export function urlsRequireTls(servers: string): boolean {
  return servers.split(',').some((url) => url.trim().toLowerCase().startsWith('tls://'));
}

/**
 * The nats.js `tls` option, or undefined for plaintext. Throws InvalidConfig
 * (one line, what to fix) for half a client key pair or an unreadable file.
 */
export function natsTlsOf(servers: string, tls: BusTlsOptions = {}): TlsOptions | undefined {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      'KUBEBUS_NATS_CERT and KUBEBUS_NATS_KEY go together: set both (mTLS) or neither',
    );
  }
  const required = urlsRequireTls(servers) || Object.values(tls).some((v) => v !== undefined);
  if (!required) return undefined;
  for (const [variable, file] of [
    ['KUBEBUS_NATS_CA', tls.caFile],
    ['KUBEBUS_NATS_CERT', tls.certFile],
    ['KUBEBUS_NATS_KEY', tls.keyFile],
  ] as const) {
    if (file !== undefined) readable(variable, file);
  }
  return {
    ...(tls.caFile === undefined ? {} : { caFile: tls.caFile }),
    ...(tls.certFile === undefined ? {} : { certFile: tls.certFile }),
    ...(tls.keyFile === undefined ? {} : { keyFile: tls.keyFile }),
  };
}

/** nats.js' refusal of a server without TLS while the client requires it. */
export function isTlsUnavailable(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /does not support 'tls'|tls.*is not available on this server/i.test(message);
}

function readable(variable: string, file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch {
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `${variable} names ${file}, which cannot be read: point it at a PEM file (a mounted Secret)`,
    );
  }
}
