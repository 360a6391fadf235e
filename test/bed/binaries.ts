// Finds the Go-built servers (and the tools that check deployment files),
// building them first when the cache lacks them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SERVER_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'etcd', 'nats-server'];
export type ServerBinary = 'kube-apiserver' | 'kube-controller-manager' | 'etcd' | 'nats-server';
export const TOOL_BINARIES = ['kustomize', 'helm', 'composecheck'];
export type ToolBinary = 'kustomize' | 'helm' | 'composecheck';

const cached = new Map<string, string>();

/** The directory a build script prints last, after checking it holds `binaries`. */
export function builtBy(script: URL | string, binaries: readonly string[]): string {
  const buildScript = fileURLToPath(new URL(script, import.meta.url));
  const known = cached.get(buildScript);
  if (known !== undefined) return known;
  let output: string;
  try {
    output = execFileSync('bash', [buildScript], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    throw new Error(
      `the test bed could not build with ${buildScript}; ` +
        `see the output above (Go >= 1.26 and the Go module proxy are needed)`,
      { cause: error },
    );
  }
  const dir = output.trim().split('\n').at(-1) ?? '';
  for (const binary of binaries) {
    if (!existsSync(join(dir, binary))) {
      throw new Error(`the binary ${binary} is missing from ${dir} after ${buildScript}`);
    }
  }
  cached.set(buildScript, dir);
  return dir;
}

/** The directory holding the server binaries; builds them (minutes, once) if needed. */
export function serversBinDir(): string {
  return builtBy('./servers/build.sh', SERVER_BINARIES);
}

export function serverBinary(name: ServerBinary): string {
  return join(serversBinDir(), name);
}

/** kustomize, helm or composecheck; builds them (minutes, once) if needed. */
export function toolBinary(name: ToolBinary): string {
  return join(builtBy('./tools/build.sh', TOOL_BINARIES), name);
}

/** Knative's own CRDs (Service, ApiServerSource, Broker, Trigger), from its release modules. */
export function knativeCrdFiles(): string[] {
  const dir = join(builtBy('./tools/build.sh', TOOL_BINARIES), '..', 'knative');
  return ['service.yaml', 'apiserversource.yaml', 'broker.yaml', 'trigger.yaml'].map((file) =>
    join(dir, file),
  );
}
