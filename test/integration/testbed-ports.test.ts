// The test bed's ports: a port the kernel hands out for listen(0) can be handed
// again to an outgoing connection before a server binds it (a NATS route took a
// cluster node's port that way), so the bed picks ports the kernel never
// assigns by itself, checks they bind, and never hands one out twice.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePort } from '../bed/ports.js';

function ephemeralRange(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  return [low ?? 0, high ?? 0];
}

describe('test bed ports', () => {
  it('are distinct, bindable, and outside the kernel’s ephemeral range', async () => {
    const [low, high] = ephemeralRange();
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    assert.equal(new Set(ports).size, ports.length, 'a port was handed out twice');
    for (const port of ports) {
      assert.ok(port < low || port > high, `${port} is in the ephemeral range ${low}-${high}`);
      assert.ok(port >= 1024, `${port} is privileged`);
    }
    // each one binds (nothing else holds it)
    for (const port of ports.slice(0, 20)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
