// Runs one server as a supervised child: its own process group (so a stop kills
// everything it started), output to a log file, and a guard that stops it within a
// second when this Node process dies, even by SIGKILL — no orphaned servers.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { openSync, closeSync, readFileSync } from 'node:fs';

const GUARD = [
  'parent=$1; shift',
  '"$@" & child=$!',
  '(while kill -0 "$parent" 2>/dev/null; do sleep 1; done; kill -KILL "$child" 2>/dev/null) & guard=$!',
  // A signal to the group reaches the server too; the guard outlives it, so its
  // exit means the server is gone (and its ports are free).
  "trap ':' TERM INT",
  'while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done',
  'kill "$guard" 2>/dev/null',
  'exit "$rc"',
].join('\n');

const live = new Set<ServerProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous kill on exit; the guard covers the cases where no hook runs at all.
  process.on('exit', () => {
    for (const server of live) server.killGroup('SIGKILL');
  });
  // Die as a signal would, after killing the servers, unless the program handles
  // the signal itself (it will then stop the servers gracefully).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (process.listenerCount(signal) > 1) return;
      for (const server of live) server.killGroup('SIGKILL');
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
}

export interface ServerSpec {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export class ServerProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  #exitCode: number | null | undefined;

  private constructor(
    readonly spec: ServerSpec,
    child: ChildProcess,
  ) {
    this.#child = child;
    this.#exited = once(child, 'exit').then(([code]) => {
      this.#exitCode = code as number | null;
      live.delete(this);
      return this.#exitCode;
    });
  }

  static start(spec: ServerSpec): ServerProcess {
    installExitHook();
    const log = openSync(spec.logFile, 'a');
    try {
      const child = spawn(
        'bash',
        ['-c', GUARD, 'kubebus-guard', String(process.pid), spec.binary, ...spec.args],
        {
          detached: true,
          stdio: ['ignore', log, log],
          env: { ...process.env, ...spec.env },
          ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        },
      );
      const server = new ServerProcess(spec, child);
      live.add(server);
      return server;
    } finally {
      closeSync(log);
    }
  }

  get pid(): number {
    if (this.#child.pid === undefined) throw new Error(`${this.spec.name} has no pid`);
    return this.#child.pid;
  }

  /** undefined while running, else the exit code (null when killed by a signal). */
  get exitCode(): number | null | undefined {
    return this.#exitCode;
  }

  killGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // already gone
    }
  }

  /** SIGTERM the group, then SIGKILL it after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.#exitCode !== undefined) return;
    this.killGroup('SIGTERM');
    const timer = setTimeout(() => {
      this.killGroup('SIGKILL');
    }, graceMs);
    await this.#exited;
    clearTimeout(timer);
    this.killGroup('SIGKILL'); // anything the server forked and left behind
    await this.#groupGone();
  }

  /** Kill the whole group at once, as a crash would. */
  async kill(): Promise<void> {
    if (this.#exitCode !== undefined) return;
    this.killGroup('SIGKILL');
    await this.#exited;
    await this.#groupGone();
  }

  /** Waits until no process of the group is left. */
  async #groupGone(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      try {
        process.kill(-this.pid, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  tail(lines = 30): string {
    try {
      return readFileSync(this.spec.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Polls `probe` until it returns true; fails fast, with the log, if the server exits. */
  async waitReady(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#exitCode !== undefined) {
        throw new Error(
          `${this.spec.name} exited (code ${String(this.#exitCode)}) before it was ready; ` +
            `log ${this.spec.logFile}:\n${this.tail()}`,
        );
      }
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline) {
        // Nobody holds a server that never got ready: kill it, or it would keep
        // the test process (and CI) alive.
        await this.kill();
        throw new Error(
          `${this.spec.name} was not ready within ${timeoutMs} ms; log ${this.spec.logFile}:\n${this.tail()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
