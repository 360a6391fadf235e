// A replica paused as a whole past its lease — a stop-the-world garbage
// collection, a frozen VM, SIGSTOP: no timer, no I/O, no renewal runs — and
// its reconcile going on from where it stopped, right before a write. The
// replica's fence timer has not run yet when the reconcile goes on (nothing
// lets it in between), so only a fence asked at the write itself can refuse
// it (ADR 0005). Then the request goes back, and once the replica holds the
// partition again it is reconciled and written: nothing is lost. A real
// child process, a real nats-server.
import { partitionOf } from '@kubebus/shared/bus';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { natsConfig, natsUrl, startNats } from '../bed/nats.js';
import type { ServerProcess } from '../bed/process.js';
import { waitFor } from '../support/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The lease's TTL: the replica trusts its lease for half of it after each renewal. */
const TTL = 2_000;
/** How long the replica stops the world: past its trust, and past the server's expiry of its lease. */
const PAUSE_MS = TTL + 500;

describe('a replica paused as a whole', { timeout: 120_000 }, () => {
  let dir: string;
  let server: ServerProcess;
  let url: string;
  let parent: Server | undefined;
  let child: ChildProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubebus-paused-'));
    const config = await natsConfig(dir);
    server = await startNats(config);
    url = natsUrl(config);
  });

  after(async () => {
    child?.kill('SIGKILL');
    parent?.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes nothing when it resumes past its lease, and loses nothing', async () => {
    const lines: string[] = [];
    // each write names the reconcile that made it: the answer reaches the
    // child before its `wrote` line reaches us, so a count read at a line
    // could already hold the next reconcile's write
    const writes: string[] = [];
    parent = createServer((request, response) => {
      request.resume();
      writes.push(request.url ?? '');
      response.end();
    });
    const listening = parent;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const parentUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;

    child = spawn(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        'test/support/paused-replica.ts',
        url,
        parentUrl,
        String(TTL),
        String(PAUSE_MS),
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const stdout = child.stdout;
    assert.ok(stdout !== null);
    createInterface({ input: stdout }).on('line', (line) => lines.push(line));
    await waitFor(() => lines.includes('ready'), 'the replica to hold its partitions', 60_000);

    const key = { group: 'g', resource: 'r', namespace: 'ns', name: 'paused' };
    const nc = await connect({ servers: url });
    await jetstream(nc).publish(`pause.${partitionOf(key, 2)}.paused`, JSON.stringify(key));
    await nc.close();

    await waitFor(
      () => lines.includes('refused') || lines.includes('wrote'),
      'the reconcile to write or be refused after the pause',
      60_000,
    );
    assert.equal(
      lines.filter((line) => line !== 'ready')[0],
      'refused',
      'the first write after the pause went out',
    );
    // handed back, and reconciled again once the replica holds the partition again
    await waitFor(() => lines.includes('wrote'), 'the request to be reconciled again', 60_000);
    assert.deepEqual(
      lines.filter((line) => line !== 'ready'),
      ['refused', 'wrote'],
    );
    assert.deepEqual(
      writes,
      ['/write?reconcile=2'],
      'the paused reconcile wrote, or the request was written twice',
    );
  });
});
