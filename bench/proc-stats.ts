// CPU seconds and peak RSS of a process tree, from /proc (Linux): what a
// system under bench spent, read from the kernel, not from the system itself.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function children(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pid and every descendant running `command` (the test bed's guard shells are left out). */
export function processTree(pid: number, command = 'node'): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i] ?? 0));
  return all.filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === command;
    } catch {
      return false;
    }
  });
}

export interface ProcStats {
  readonly cpuSeconds: number;
  /** sum of each process' peak resident set (VmHWM) */
  readonly peakRssMb: number;
  /** sum of each process' resident set now (VmRSS) */
  readonly rssMb: number;
}

export function procStats(pids: readonly number[]): ProcStats {
  let ticks = 0;
  let hwmKb = 0;
  let rssKb = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      hwmKb += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      rssKb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { cpuSeconds: ticks / TICKS_PER_SECOND, peakRssMb: hwmKb / 1024, rssMb: rssKb / 1024 };
}
