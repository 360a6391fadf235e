// How large V8 lets the young generation grow. V8 sizes each semi-space from
// node's heap limit, which node sizes from the memory the process may use:
// on a large host that is 16 MB on Node 22, 32 MB on Node 26 and 64 MB on
// Node 24 (33.6 to 134 MB of RSS under an operator's allocation rate), most of
// the footprint of a process whose live data is ~50 MB. The size is fixed
// when V8 sets up its heap, before any JavaScript runs: `kubebus run`
// restarts itself once with node's `--max-semi-space-size`, in the same
// process (execve keeps the pid, so a supervisor, a container runtime or a
// bench sees one process). ADR 0026.
import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';

export const YoungGenerationEnv = z.object({
  /** each of V8's two semi-spaces may grow to this many MB; 0 leaves V8's own maximum */
  KUBEBUS_MAX_SEMI_SPACE_MB: z.coerce.number().int().min(0).max(256).default(8),
});

const FLAG = /(^|[\s"'])--max[-_]semi[-_]space[-_]size(=|\s|$)/;

/**
 * The least semi-space V8 gives itself for a heap limit: 1/128 of it on Node
 * 22, 2–4 times that on Node 24 and 26 (measured under cgroup limits of 512
 * MiB to 4 GiB). A bound at or above it would grow the young generation of a
 * process with little memory (a pod under a 512 MiB limit gets 1–5 MB), so
 * the restart happens only below it.
 */
export function leastOwnSemiSpaceMb(heapLimitBytes: number): number {
  return heapLimitBytes / 2 ** 20 / 128;
}

/** The command node restarts: its script and the arguments after it. */
export interface Command {
  readonly script: string;
  readonly args: readonly string[];
}

/** What of the running node the decision reads. */
export interface NodeState {
  readonly execArgv: readonly string[];
  readonly nodeOptions: string | undefined;
  readonly heapLimitBytes: number;
  /** an IPC channel (a fork, `node --watch`) that a restart would lose */
  readonly supervised: boolean;
}

/**
 * The arguments node restarts with (after the executable), or undefined
 * when no restart is wanted: the bound is 0; node was already given a
 * semi-space size — on its command line, in NODE_OPTIONS, or by this
 * restart (which is also what keeps it from looping); V8's own is no larger;
 * or a parent talks to this process over IPC.
 */
export function restartArguments(
  maxSemiSpaceMb: number,
  node: NodeState,
  command: Command,
): string[] | undefined {
  if (maxSemiSpaceMb === 0 || node.supervised) return undefined;
  if (node.execArgv.some((flag) => FLAG.test(flag)) || FLAG.test(node.nodeOptions ?? ''))
    return undefined;
  if (leastOwnSemiSpaceMb(node.heapLimitBytes) <= maxSemiSpaceMb) return undefined;
  return [
    `--max-semi-space-size=${String(maxSemiSpaceMb)}`,
    ...node.execArgv,
    command.script,
    ...command.args,
  ];
}

/** What of `process` the restart uses: given by tests. */
export interface Restartable {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  readonly channel?: unknown;
  readonly permission?: { has(scope: string): boolean };
  readonly execve?: (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never;
}

/**
 * Replaces this process with node running `command` with the semi-space
 * bound, when that makes the young generation smaller. The command is given,
 * not taken from process.argv: a wrapper script that rewrote argv must not
 * run twice. Call first, before anything is written, opened or listened to:
 * nothing of this process survives but its pid and stdio. An invalid
 * variable is left for the command's own parse to report. Where node cannot
 * replace itself (Windows, Node < 22.15, the permission model without child
 * processes) V8's maximum stays.
 */
export function boundYoungGeneration(
  command: Command,
  proc: Restartable = process,
  heapLimitBytes = getHeapStatistics().heap_size_limit,
): void {
  const parsed = YoungGenerationEnv.safeParse(proc.env);
  const { execve } = proc;
  if (!parsed.success || execve === undefined || proc.platform === 'win32') return;
  if (proc.permission !== undefined && !proc.permission.has('child')) return;
  const args = restartArguments(
    parsed.data.KUBEBUS_MAX_SEMI_SPACE_MB,
    {
      execArgv: proc.execArgv,
      nodeOptions: proc.env['NODE_OPTIONS'],
      heapLimitBytes,
      supervised: proc.channel !== undefined || proc.env['WATCH_REPORT_DEPENDENCIES'] !== undefined,
    },
    command,
  );
  if (args === undefined) return;
  try {
    execve.call(proc, proc.execPath, [proc.execPath, ...args], proc.env);
  } catch {
    // refused (a sandbox, a platform without it): run on with V8's maximum
  }
}
