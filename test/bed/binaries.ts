// Finds the Go-built servers, building them first when the cache lacks them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SERVER_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'etcd', 'nats-server'];
export type ServerBinary = 'kube-apiserver' | 'kube-controller-manager' | 'etcd' | 'nats-server';

const buildScript = fileURLToPath(new URL('./servers/build.sh', import.meta.url));
let cached: string | undefined;

/** The directory holding the server binaries; builds them (minutes, once) if needed. */
export function serversBinDir(): string {
  if (cached !== undefined) return cached;
  let output: string;
  try {
    output = execFileSync('bash', [buildScript], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    throw new Error(
      `the test bed could not build its servers with ${buildScript}; ` +
        `see the output above (Go >= 1.26 and the Go module proxy are needed)`,
      { cause: error },
    );
  }
  const dir = output.trim().split('\n').at(-1) ?? '';
  for (const binary of SERVER_BINARIES) {
    if (!existsSync(join(dir, binary))) {
      throw new Error(`the server binary ${binary} is missing from ${dir} after ${buildScript}`);
    }
  }
  cached = dir;
  return dir;
}

export function serverBinary(name: ServerBinary): string {
  return join(serversBinDir(), name);
}
