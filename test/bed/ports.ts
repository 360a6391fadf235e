// Free loopback ports for servers started later. A port the kernel hands out for
// listen(0) is an ephemeral port, and may be handed again — to an outgoing
// connection (a NATS route dialling a peer, a client reaching etcd) — before our
// server binds it: "address already in use". So we pick from below the kernel's
// ephemeral range, where it never assigns ports by itself, check that the port
// binds now, and never hand the same port out twice in one process.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const [low, high] = pickRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port)) continue;
    if (await binds(port)) {
      handedOut.add(port);
      return port;
    }
  }
  // A crowded range: let the kernel choose, as a last resort.
  const port = await bindAny();
  handedOut.add(port);
  return port;
}

/** Below the ephemeral range when there is room there, else the whole unprivileged range. */
function pickRange(): [number, number] {
  try {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (ephemeralLow !== undefined && ephemeralLow - LOWEST >= 1000) return [LOWEST, ephemeralLow];
  } catch {
    // not Linux: no range to avoid that we can read
  }
  return [LOWEST, 65_535];
}

async function binds(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      resolve(true);
    });
  });
  if (bound) await close(server);
  return bound;
}

async function bindAny(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await close(server);
  if (address === null || typeof address === 'string') throw new Error('no port assigned');
  return address.port;
}

function close(server: ReturnType<typeof createServer>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}
