// What a client that speaks NATS in plaintext gets from a server: proof, at
// the protocol, that a server requiring TLS serves no plaintext client.
import { connect as tcpConnect } from 'node:net';

/**
 * What a plaintext client gets: the server's INFO, then (CONNECT and PING sent
 * in the clear) a PONG if the server serves plaintext; or the server hangs up.
 */
export async function plaintextProbe(
  port: number,
): Promise<{ info: string; pong: boolean; hungUp: boolean }> {
  const socket = tcpConnect(port, '127.0.0.1');
  let received = '';
  let sent = false;
  const outcome = await new Promise<'pong' | 'hung up' | 'silent'>((resolve) => {
    const silent = setTimeout(() => {
      resolve('silent');
    }, 15_000);
    const done = (how: 'pong' | 'hung up') => {
      clearTimeout(silent);
      resolve(how);
    };
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      if (!sent && received.includes('\r\n')) {
        sent = true;
        socket.write('CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n');
      }
      if (received.includes('PONG')) done('pong');
    });
    socket.on('close', () => {
      done('hung up');
    });
    socket.on('error', () => {
      done('hung up');
    });
  });
  socket.destroy();
  return {
    info: received.split('\r\n')[0] ?? '',
    pong: outcome === 'pong',
    hungUp: outcome === 'hung up',
  };
}

export const infoOf = (line: string) =>
  JSON.parse(line.replace(/^INFO /, '')) as Record<string, unknown>;
