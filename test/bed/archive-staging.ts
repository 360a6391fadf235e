// The staging folders downloads are unpacked into before their one rename into
// the cache. A download cut short (Ctrl-C, SIGKILL, a reboot) leaves its folder
// behind with a partial file; the next download of the same archive removes
// such folders: their owner process is gone, or, where no owner can be asked
// (another machine sharing the cache), they are more than an hour old.
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const OWNER = '.owner';
export const STALE_AFTER_MS = 60 * 60 * 1000;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

function stale(dir: string, now: number): boolean {
  let owner: { pid: number; host: string } | undefined;
  try {
    const [pid, host] = readFileSync(join(dir, OWNER), 'utf8').trim().split(' ');
    if (Number.isInteger(Number(pid)) && Number(pid) > 0 && host !== undefined)
      owner = { pid: Number(pid), host };
  } catch {
    owner = undefined; // not written yet, or an older kubebus's folder
  }
  if (owner !== undefined && owner.host === hostname()) return !running(owner.pid);
  try {
    return now - statSync(dir).mtimeMs > STALE_AFTER_MS;
  } catch {
    return false; // already gone
  }
}

/** Removes the stale staging folders of `name`, then makes a new one owned by this process. */
export function makeStaging(parent: string, name: string): string {
  const prefix = `.${name}-`;
  const now = Date.now();
  for (const entry of readdirSync(parent)) {
    const dir = join(parent, entry);
    if (entry.startsWith(prefix) && entry.length === prefix.length + 6 && stale(dir, now))
      rmSync(dir, { recursive: true, force: true });
  }
  const staging = mkdtempSync(join(parent, prefix));
  writeFileSync(join(staging, OWNER), `${process.pid} ${hostname()}\n`, { mode: 0o600 });
  return staging;
}

/** Takes the owner record out, so the folder holds only the binaries when it is put in place. */
export function releaseStaging(staging: string): void {
  rmSync(join(staging, OWNER), { force: true });
}

/**
 * Puts a finished staging folder in place as `final` with one rename. When
 * another process put the same download there first, theirs is kept (the
 * caller's `finally` removes this folder).
 */
export function putInPlace(staging: string, final: string): void {
  releaseStaging(staging);
  try {
    renameSync(staging, final);
  } catch (error) {
    if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}
