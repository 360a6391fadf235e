// Listening on a port, and closing without waiting for idle keep-alive clients.
import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(
  server: Server | HttpsServer,
  host: string,
  port: number,
): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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

/** Whether only this machine can reach an address (what an unauthenticated endpoint may bind). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
