// `kubebus dev` on an existing cluster keeps its nats-server's JetStream
// store across runs, one per cluster: the objects outlive a run, and so must
// what the bus holds of them — ctx.once's records above all. A store made anew
// each run had every existing object's external calls made again at each
// start. One process holds a store at a time (a lock file with its pid); a
// second dev against the same cluster gets a store of its own for its run.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../../../../test/bed/archive-sources.js';

export interface HeldStore {
  readonly dir: string;
  release(): void;
}

/** Where a cluster's dev store lives: the cache, by the apiserver's URL and the context. */
export function devStoreDir(
  env: Readonly<Record<string, string | undefined>>,
  server: string,
  context: string,
): string {
  const id = createHash('sha256').update(`${server}\n${context}`).digest('hex').slice(0, 16);
  return join(cacheRoot(env), 'dev', id);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The store, held by this process until release(); undefined while another live process holds it. */
export function holdStore(dir: string): HeldStore | undefined {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'lock');
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return {
        dir,
        release: () => {
          rmSync(lock, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lock, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) return undefined;
      // a run that ended without releasing it (kill -9)
      rmSync(lock, { force: true });
    }
  }
  return undefined;
}
