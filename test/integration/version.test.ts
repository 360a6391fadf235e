// `kubebus version` against real nats-servers: the one the test bed runs is
// named and accepted; one not there, or one kubebus cannot run on (here:
// JetStream off), is named with what is missing, and the command exits 1 for a
// script to stop on.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { requireServers, serverBinary } from '../bed/binaries.js';
import { httpCall } from '../bed/http.js';
import { freePort } from '../bed/ports.js';
import { ServerProcess } from '../bed/process.js';
import { TestBed } from '../bed/testbed.js';
import { kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const version = (server: string) =>
  promisify(execFile)(process.execPath, kubebusArgs('version', '--server', server), {
    env: { PATH: process.env['PATH'] ?? '' },
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number; stdout?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
    }),
  );

describe('kubebus version', { timeout: 180_000 }, () => {
  let bed: TestBed;
  let plain: ServerProcess;
  let plainUrl: string;

  before(async () => {
    bed = await TestBed.start();
    await requireServers(['nats-server']);
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-version-'));
    const [port, monitor] = [await freePort(), await freePort()];
    const conf = join(dir, 'nats.conf');
    // no jetstream block: core NATS only
    writeFileSync(conf, `listen: 127.0.0.1:${String(port)}\nhttp: 127.0.0.1:${String(monitor)}\n`);
    plain = ServerProcess.start({
      name: 'nats-server-without-jetstream',
      binary: serverBinary('nats-server'),
      args: ['-c', conf],
      logFile: join(dir, 'nats.log'),
    });
    await waitFor(
      async () => (await httpCall(`http://127.0.0.1:${String(monitor)}/healthz`)).status === 200,
      'the nats-server without JetStream to answer',
    );
    plainUrl = `nats://127.0.0.1:${String(port)}`;
  });
  after(async () => {
    await plain?.stop();
    await bed?.stop();
  });

  it("names the test bed's nats-server and exits 0", async () => {
    const result = await version(bed.natsUrl);
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /^nats-server 2\.\d+\.\d+ \(nats:\/\/127\.0\.0\.1:\d+\)$/m);
  });

  it('says a server is not there, and exits 1', async () => {
    const result = await version(`nats://127.0.0.1:${String(await freePort())}`);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /^nats-server unreachable at nats:\/\/127\.0\.0\.1:\d+: /m);
  });

  it('says what a server kubebus cannot run on lacks, and exits 1', async () => {
    const result = await version(plainUrl);
    assert.equal(result.code, 1, result.stdout);
    assert.match(
      result.stdout,
      /^nats-server 2\.\d+\.\d+ \(nats:\/\/127\.0\.0\.1:\d+\): JetStream is off, kubebus needs it/m,
    );
  });
});
