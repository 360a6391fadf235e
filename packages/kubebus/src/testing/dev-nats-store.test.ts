import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitUntil } from './wait.js';
import { HEARTBEAT_MS, devStoreDir, holdStore, startOf } from './dev-nats-store.js';

describe("kubebus dev's kept NATS store", () => {
  const root = mkdtempSync(join(tmpdir(), 'kubebus-devstore-'));
  after(() => {
    rmSync(root, { recursive: true, force: true });
  });
  let n = 0;
  const fresh = () => join(root, String(n++));
  const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) as unknown;
  const lockAs = (dir: string, pid: number, started: string) => {
    writeFileSync(join(dir, 'lock'), JSON.stringify({ pid, started, host: hostname() }));
  };

  it('is one per cluster and operator', () => {
    const env = { KUBEBUS_CACHE: '/c' };
    assert.equal(devStoreDir(env, 'uid-a', 'op'), devStoreDir(env, 'uid-a', 'op'));
    assert.notEqual(devStoreDir(env, 'uid-a', 'op'), devStoreDir(env, 'uid-b', 'op'));
    assert.notEqual(devStoreDir(env, 'uid-a', 'op'), devStoreDir(env, 'uid-a', 'other'));
    assert.match(devStoreDir(env, 'uid-a', 'op'), /^\/c\/dev\/[0-9a-f]{16}$/);
  });

  it('is held by one process, and let go by it', () => {
    const dir = fresh();
    const store = holdStore(dir);
    assert.ok(store);
    assert.deepEqual(lockOf(dir), {
      pid: process.pid,
      started: startOf(process.pid),
      host: hostname(),
    });
    store.release();
    assert.equal(existsSync(join(dir, 'lock')), false);
  });

  it('is refused while another live process holds it, and taken once it is gone', async () => {
    const dir = fresh();
    holdStore(dir)?.release();
    const other = spawn('sleep', ['60']);
    const pid = other.pid ?? 0;
    lockAs(dir, pid, startOf(pid));
    assert.equal(holdStore(dir), undefined);
    assert.equal((lockOf(dir) as { pid: number }).pid, pid, 'the holder’s lock is left alone');
    other.kill('SIGKILL');
    await once(other, 'exit');
    const taken = holdStore(dir);
    assert.ok(taken, 'a dead holder’s lock is taken over');
    taken.release();
  });

  it('takes a lock whose pid a later process has (a container’s pid 1 restarted)', () => {
    const dir = fresh();
    holdStore(dir)?.release();
    lockAs(dir, process.pid, 'an earlier start');
    const taken = holdStore(dir);
    assert.ok(taken);
    taken.release();
  });

  it('is taken over by one of several runs that find it stale at once', async () => {
    const contender = join(import.meta.dirname, 'dev-nats-store.ts');
    // each run loads, says so, waits for the same moment, tries, says whether it holds, then waits to end
    const script = `
      import { existsSync } from 'node:fs';
      const { holdStore } = await import(${JSON.stringify(contender)});
      const go = process.argv[1] + '.go';
      process.stdout.write('ready\\n');
      while (!existsSync(go));
      const store = holdStore(process.argv[1]);
      process.stdout.write(store === undefined ? 'refused\\n' : 'held\\n');
      process.stdin.resume();
      process.stdin.on('end', () => { store?.release(); process.exit(0); });`;
    for (let round = 0; round < 6; round++) {
      const dir = fresh();
      holdStore(dir)?.release();
      const gone = spawn('true');
      await once(gone, 'exit');
      lockAs(dir, gone.pid ?? 0, 'long ago');
      const runs = Array.from({ length: 4 }, () =>
        spawn(
          process.execPath,
          ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script, dir],
          { stdio: ['pipe', 'pipe', 'inherit'] },
        ),
      );
      /** A run's lines as they come: ready, then held or refused. */
      const lines = runs.map((run) => {
        const said: string[] = [];
        run.stdout.on('data', (chunk: Buffer) => {
          said.push(
            ...chunk
              .toString()
              .split('\n')
              .filter((line) => line !== ''),
          );
        });
        return said;
      });
      const saidAll = (count: number) =>
        waitUntil(
          () => Promise.resolve(lines.every((said) => said.length >= count) ? true : undefined),
          () => `${String(count)} lines from each run: ${JSON.stringify(lines)}`,
          60_000,
        );
      await saidAll(1);
      writeFileSync(`${dir}.go`, '');
      await saidAll(2);
      const answers = lines.map((said) => said[1]);
      for (const run of runs) run.stdin.end();
      await Promise.all(
        runs.map((run) => (run.exitCode === null ? once(run, 'exit') : Promise.resolve())),
      );
      assert.deepEqual(
        answers.filter((answer) => answer === 'held'),
        ['held'],
        `round ${String(round)}: ${answers.join(', ')}`,
      );
    }
  });

  it('counts a lock of another host held while its holder marks it, and stale once it lapses', () => {
    const dir = fresh();
    holdStore(dir)?.release();
    // a container's run: another host name each start, no pid to ask
    writeFileSync(
      join(dir, 'lock'),
      JSON.stringify({ pid: 1, started: '1', host: `${hostname()}-elsewhere` }),
    );
    assert.equal(holdStore(dir), undefined, 'just marked: held');
    const lapsed = new Date(Date.now() - 5 * HEARTBEAT_MS);
    utimesSync(join(dir, 'lock'), lapsed, lapsed);
    const taken = holdStore(dir);
    assert.ok(taken, 'unmarked for longer than its heartbeats allow: taken over');
    taken.release();
  });

  it('never lets go of a lock another process holds now', () => {
    const dir = fresh();
    const store = holdStore(dir);
    assert.ok(store);
    lockAs(dir, 1, startOf(1));
    store.release();
    assert.equal((lockOf(dir) as { pid: number }).pid, 1);
  });
});
