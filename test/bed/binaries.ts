// Finds the servers the test bed runs (and the tools that check deployment
// files), in setup-envtest's order of preference: a directory of binaries
// named by KUBEBUS_ASSETS (like KUBEBUILDER_ASSETS); binaries already on PATH
// at a supported version; last, the Go source build into the cache.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
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
      `the test bed could not build with ${buildScript} (see the output above): ` +
        `set KUBEBUS_ASSETS to a directory holding kube-apiserver, etcd and nats-server, ` +
        `put them on PATH, or install Go >= 1.26 with its module proxy`,
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

/** The oldest version of each server kubebus works with (README, Compatibility). */
const MINIMUM: Record<ServerBinary, readonly [number, number]> = {
  'kube-apiserver': [1, 29],
  'kube-controller-manager': [1, 29],
  etcd: [3, 5],
  'nats-server': [2, 10],
};

/** major.minor of what `<binary> --version` prints, or undefined. */
function versionOf(path: string): readonly [number, number] | undefined {
  try {
    const printed = execFileSync(path, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
    });
    const match = /v?(\d+)\.(\d+)\.\d+/.exec(printed);
    return match === null ? undefined : [Number(match[1]), Number(match[2])];
  } catch {
    return undefined;
  }
}

const atLeast = (version: readonly [number, number], minimum: readonly [number, number]) =>
  version[0] > minimum[0] || (version[0] === minimum[0] && version[1] >= minimum[1]);

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The binary on PATH, if one is there at a supported version. */
function onPath(name: ServerBinary, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, name);
    if (!executable(path)) continue;
    const version = versionOf(path);
    // the first one found decides, as a shell would run it; an old one is passed over
    return version !== undefined && atLeast(version, MINIMUM[name]) ? path : undefined;
  }
  return undefined;
}

/** Where a server comes from: KUBEBUS_ASSETS, else PATH, else the Go build. */
export function findServer(
  name: ServerBinary,
  env: NodeJS.ProcessEnv = process.env,
  build: () => string = serversBinDir,
): string {
  const assets = env['KUBEBUS_ASSETS'];
  const cacheKey = `server:${name}:${assets ?? ''}:${env['PATH'] ?? ''}`;
  const cachedPath = cached.get(cacheKey);
  if (cachedPath !== undefined) return cachedPath;
  let path: string;
  if (assets !== undefined && assets !== '') {
    path = join(assets, name);
    if (!executable(path))
      throw new Error(
        `KUBEBUS_ASSETS names ${assets}, which has no executable ${name}: put the binaries there, or unset it`,
      );
  } else {
    path = onPath(name, env) ?? join(build(), name);
  }
  cached.set(cacheKey, path);
  return path;
}

/** Fails first, and clearly, when a server can be found nowhere. */
export function requireServers(
  names: readonly ServerBinary[] = ['kube-apiserver', 'etcd', 'nats-server'],
): void {
  for (const name of names) findServer(name);
}

export function serverBinary(name: ServerBinary): string {
  return findServer(name);
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
