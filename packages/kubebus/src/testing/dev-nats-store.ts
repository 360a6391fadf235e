// `kubebus dev` on an existing cluster keeps its nats-server's JetStream
// store across runs, one per cluster (its kube-system namespace's uid) and
// operator: the objects outlive a run, and so must what the bus holds of them
// — ctx.once's records above all. A store made anew each run had every
// existing object's external calls made again at each start. One process
// holds a store at a time (a lock naming its pid, host and start time, its
// mtime marked every 30 s for runs on other hosts); a second dev of the
// operator on the cluster gets a store of its own.
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { cacheRoot } from '../../../../test/bed/archive-sources.js';

export interface HeldStore {
  readonly dir: string;
  release(): void;
}

/** Where a cluster's dev store of an operator lives: the cache, by the cluster's identity. */
export function devStoreDir(
  env: Readonly<Record<string, string | undefined>>,
  cluster: string,
  operator: string,
): string {
  const id = createHash('sha256').update(`${cluster}\n${operator}`).digest('hex').slice(0, 16);
  return join(cacheRoot(env), 'dev', id);
}

/** Who holds a lock: a process on a host, told apart from a later one of the same pid by its start. */
interface Holder {
  readonly pid: number;
  readonly started: string;
  readonly host: string;
}

/** When a process started (Linux: /proc/<pid>/stat's starttime), or '' where that is not known. */
export function startOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

const me = (): Holder => ({ pid: process.pid, started: startOf(process.pid), host: hostname() });

/** How often a holder marks its lock as alive (its mtime), and how long one unmarked counts as alive. */
export const HEARTBEAT_MS = 30_000;
const HEARTBEAT_LAPSE_MS = 4 * HEARTBEAT_MS;

function holding(holder: Holder | undefined, lock: string): boolean {
  if (holder === undefined) return false;
  // another host sharing the home directory (a container, whose host name changes
  // with each start): no pid to ask, so alive while it marks the lock
  if (holder.host !== hostname()) return Date.now() - mtimeOf(lock) < HEARTBEAT_LAPSE_MS;
  if (holder.pid === process.pid && holder.started === me().started) return false;
  try {
    process.kill(holder.pid, 0);
  } catch {
    return false;
  }
  // the pid is taken again by another process (a container's pid 1 restarted)
  return holder.started === '' || startOf(holder.pid) === holder.started;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function holderOf(lock: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(lock, 'utf8')) as Partial<Holder>;
    return typeof parsed.pid === 'number' &&
      typeof parsed.started === 'string' &&
      typeof parsed.host === 'string'
      ? { pid: parsed.pid, started: parsed.started, host: parsed.host }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The store, held by this process until release(); undefined while another
 * live process holds it. The lock is written whole before it appears (a link
 * of a complete file), taken only by an exclusive link, and released only by
 * its holder; `onLost` is told if another run takes it over meanwhile (this
 * one was paused past its heartbeats). Throws when the directory cannot be
 * made (an unwritable cache).
 */
export function holdStore(
  dir: string,
  options: { readonly onLost?: () => void } = {},
): HeldStore | undefined {
  // the store holds the bus of a cluster's objects: this user's only
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const lock = join(dir, 'lock');
  const holder = me();
  const mine = join(dir, `lock.${String(process.pid)}.${randomBytes(4).toString('hex')}`);
  writeFileSync(mine, JSON.stringify(holder));
  try {
    // a few rounds: a lock released or replaced while it is looked at is looked at again
    for (let round = 0; round < 3; round++) {
      if (linked(mine, lock)) return held(dir, lock, holder, options.onLost);
      // which lock file this is, before and after what it says: the words are that file's
      const seen = lockIdentity(lock);
      const current = holderOf(lock);
      if (seen === undefined || lockIdentity(lock) !== seen) continue;
      if (holding(current, lock)) return undefined;
      // A run that ended without releasing it (kill -9). Of the runs that found
      // this lock file stale, only the one that links its takeover name (kept)
      // removes it; the others find that name taken. It is removed only while
      // it is still that file, and taken only by the exclusive link: a run
      // that linked a fresh lock meanwhile keeps it.
      if (!linked(mine, join(dir, `${TAKEN_OVER}${seen}`))) return undefined;
      if (lockIdentity(lock) !== seen) return undefined;
      rmSync(lock, { force: true });
      if (!linked(mine, lock)) return undefined;
      forgetOldTakeovers(dir);
      return held(dir, lock, holder, options.onLost);
    }
    return undefined;
  } finally {
    rmSync(mine, { force: true });
  }
}

/** An exclusive link: false when the name is taken. */
function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

const TAKEN_OVER = 'lock.taken-over.';
const DAY_MS = 24 * 60 * 60 * 1_000;

/** One lock file told from another (a new one is a new inode, made at another time), or undefined once gone. */
function lockIdentity(lock: string): string | undefined {
  try {
    const { ino, ctimeMs, size } = statSync(lock);
    return createHash('sha256')
      .update(`${String(ino)}:${String(ctimeMs)}:${String(size)}`)
      .digest('hex')
      .slice(0, 16);
  } catch {
    return undefined;
  }
}

/** Takeover names a day old: no run still deciding has read those locks. */
function forgetOldTakeovers(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(TAKEN_OVER)) continue;
    const path = join(dir, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > DAY_MS) rmSync(path, { force: true });
    } catch {
      // removed by another run meanwhile
    }
  }
}

function held(dir: string, lock: string, holder: Holder, onLost?: () => void): HeldStore {
  const ours = () => {
    const current = holderOf(lock);
    return current?.pid === holder.pid && current.started === holder.started;
  };
  // alive, as a run on another host can see it
  const heartbeat = setInterval(() => {
    if (!ours()) {
      clearInterval(heartbeat);
      onLost?.();
      return;
    }
    try {
      const now = new Date();
      utimesSync(lock, now, now);
    } catch {
      // the cache went away: the next run takes the store once the lock lapses
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    dir,
    release: () => {
      clearInterval(heartbeat);
      if (ours()) rmSync(lock, { force: true });
    },
  };
}
