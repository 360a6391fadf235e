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

/** The pid of the test bed's server `command` (kube-apiserver, nats-server, …): its command line names the bed's directory. */
export function serverPid(command: string, bedDir: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== command.slice(0, 15)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(bedDir)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** CPU seconds the whole machine has been busy (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...fields] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}
