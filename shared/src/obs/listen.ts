// Listening on a port, and closing without waiting for idle keep-alive clients.
import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly port: number;
  close(): Promise<void>;
}

/** What a server is for and the setting of its port: named when the port cannot be had. */
export interface ListenerNames {
  /** "health", "metrics", "conversion webhook", "CloudEvents sink" */
  readonly purpose: string;
  /** KUBEBUS_HEALTH_PORT, … */
  readonly setting: string;
}

export async function listen(
  server: Server | HttpsServer,
  host: string,
  port: number,
  names?: ListenerNames,
): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(names === undefined ? error : unavailablePort(error, host, port, names));
    });
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** A port in use or not allowed, said with the setting that chooses another (two roles on one machine share defaults). */
function unavailablePort(
  error: NodeJS.ErrnoException,
  host: string,
  port: number,
  { purpose, setting }: ListenerNames,
): Error {
  const what = `cannot listen on ${host}:${String(port)} for ${purpose}`;
  if (error.code === 'EADDRINUSE')
    return new Error(
      `${what}: the address is in use (another process, or another role of kubebus on this machine); set ${setting} to a free port (0: any)`,
      { cause: error },
    );
  if (error.code === 'EACCES')
    return new Error(`${what}: not allowed to listen there; set ${setting} to a port above 1023`, {
      cause: error,
    });
  // a host this machine does not have (EADDRNOTAVAIL), a name that does not resolve
  return new Error(`${what}: ${error.message}; check the host it listens on and ${setting}`, {
    cause: error,
  });
}

/** Whether only this machine can reach an address (what an unauthenticated endpoint may bind). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
