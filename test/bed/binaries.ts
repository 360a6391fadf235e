// Finds the servers the test bed runs (tools.ts finds the tools that check
// deployment files the same way), in setup-envtest's order of preference: a directory of binaries
// named by KUBEBUS_ASSETS (like KUBEBUILDER_ASSETS); binaries already on PATH
// at a supported version; prebuilt release archives, downloaded once into the
// cache with their checksums verified (archives.ts); last, the Go source build
// into the cache.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isArchiveError } from './archive-error.js';
import { cacheRoot, downloadSettings, pinnedVersions, platformOf } from './archive-sources.js';
import { cachedDownload, fetchServers } from './archives.js';
import { executable, namesVersion, pinOf } from './server-version.js';

export const SERVER_BINARIES: readonly ServerBinary[] = [
  'kube-apiserver',
  'kube-controller-manager',
  'etcd',
  'nats-server',
];
export type ServerBinary = 'kube-apiserver' | 'kube-controller-manager' | 'etcd' | 'nats-server';
const cached = new Map<string, string>();

/** The directory a build script prints last, after checking it holds `binaries`. */
export function builtBy(
  script: URL | string,
  binaries: readonly string[],
  nextStep = 'set KUBEBUS_ASSETS to a directory holding kube-apiserver, etcd and nats-server, ' +
    'put them on PATH, let kubebus download them (unset KUBEBUS_NO_DOWNLOAD), ' +
    'or install Go >= 1.26 with its module proxy',
): string {
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
      `the test bed could not build with ${buildScript} (see the output above): ${nextStep}`,
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

/** The binary an earlier download put in the cache, if any. */
function downloaded(name: ServerBinary, env: NodeJS.ProcessEnv): string | undefined {
  const platform = platformOf();
  return platform === undefined
    ? undefined
    : cachedDownload(name, downloadSettings(env), pinnedVersions(), platform);
}

/** Whether `<binary> --version` names exactly `version` (an older build is passed over). */
function printsPinned(path: string, version: string): boolean {
  try {
    const printed = execFileSync(path, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
    });
    return namesVersion(printed, version);
  } catch {
    return false;
  }
}

/** Build directories already checked, so each binary runs once per process. */
const checkedBuilds = new Map<string, boolean>();

/** All four binaries are there and each prints its own pin. */
function pinnedBuild(dir: string): boolean {
  const known = checkedBuilds.get(dir);
  if (known !== undefined) return known;
  const versions = pinnedVersions();
  const ok = SERVER_BINARIES.every(
    (binary) =>
      executable(join(dir, binary)) && printsPinned(join(dir, binary), pinOf(binary, versions)),
  );
  checkedBuilds.set(dir, ok);
  return ok;
}

/**
 * A finished Go build already in the cache (build.sh's servers/<key>/bin, all
 * four binaries at their pins), the newest first: found without Go itself, so
 * a machine that built once never downloads what it has.
 */
function goBuilt(name: ServerBinary, env: NodeJS.ProcessEnv): string | undefined {
  const dir = newestBuild(join(cacheRoot(env), 'servers'), pinnedBuild);
  return dir === undefined ? undefined : join(dir, name);
}

/** The newest `<root>/<key>/bin` that `complete` accepts (a build script's finished output). */
export function newestBuild(root: string, complete: (dir: string) => boolean): string | undefined {
  let builds: string[];
  try {
    builds = readdirSync(root).filter((entry) => !entry.startsWith('.'));
  } catch {
    return undefined;
  }
  return builds
    .map((entry) => join(root, entry, 'bin'))
    .filter(complete)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** KUBEBUS_ASSETS, else PATH, else an earlier download or Go build; undefined when none has it. */
function foundWithoutFetching(name: ServerBinary, env: NodeJS.ProcessEnv): string | undefined {
  const assets = env['KUBEBUS_ASSETS'];
  if (assets !== undefined && assets !== '') {
    const path = join(assets, name);
    if (!executable(path))
      throw new Error(
        `KUBEBUS_ASSETS names ${assets}, which has no executable ${name}: put the binaries there, or unset it`,
      );
    return path;
  }
  return onPath(name, env) ?? downloaded(name, env) ?? goBuilt(name, env);
}

/** Everything in the environment that decides where a server is found. */
const DECIDING = [
  'KUBEBUS_ASSETS',
  'PATH',
  'KUBEBUS_CACHE',
  'XDG_CACHE_HOME',
  'HOME',
  'KUBEBUS_NO_DOWNLOAD',
] as const;
const keyOf = (name: ServerBinary, env: NodeJS.ProcessEnv) =>
  JSON.stringify([name, ...DECIDING.map((variable) => env[variable] ?? '')]);

/**
 * Where a server comes from, without downloading: KUBEBUS_ASSETS, else PATH,
 * else an earlier download, else the Go build. resolveServers() downloads.
 */
export function findServer(
  name: ServerBinary,
  env: NodeJS.ProcessEnv = process.env,
  build: () => string = serversBinDir,
): string {
  const cacheKey = keyOf(name, env);
  const cachedPath = cached.get(cacheKey);
  if (cachedPath !== undefined) return cachedPath;
  const path = foundWithoutFetching(name, env) ?? join(build(), name);
  cached.set(cacheKey, path);
  return path;
}

/** Whether `go` is on the PATH of `env`. */
export function hasGo(env: NodeJS.ProcessEnv): boolean {
  return (env['PATH'] ?? '')
    .split(delimiter)
    .some((dir) => dir !== '' && executable(join(dir, 'go')));
}

export interface ResolveOptions {
  /** the Go build; returns the directory holding the binaries */
  readonly build?: () => string;
  /** progress, one line each (stderr by default) */
  readonly note?: (line: string) => void;
}

/**
 * Finds every server in `names`, downloading the prebuilt ones that are
 * missing, then building what is still missing with Go. A download that is
 * unavailable (offline, not published) falls through to the Go build with a
 * note; one that is refused (checksum, damaged archive) throws. Every error is
 * one line that names the next step.
 */
export async function resolveServers(
  names: readonly ServerBinary[],
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveOptions = {},
): Promise<ReadonlyMap<ServerBinary, string>> {
  const note = options.note ?? ((line: string) => process.stderr.write(`kubebus: ${line}\n`));
  const found = new Map<ServerBinary, string>();
  for (const name of names) {
    const path = cached.get(keyOf(name, env)) ?? foundWithoutFetching(name, env);
    if (path !== undefined) found.set(name, path);
  }
  let missing = names.filter((name) => !found.has(name));
  if (missing.length === 0) return remember(found, env);

  const settings = downloadSettings(env);
  const platform = platformOf();
  let whyNotDownloaded: string;
  if (!settings.enabled) whyNotDownloaded = 'downloads are off (KUBEBUS_NO_DOWNLOAD=1)';
  else if (platform === undefined)
    whyNotDownloaded = `no prebuilt servers are published for ${process.platform}/${process.arch}`;
  else {
    try {
      for (const [name, path] of await fetchServers(
        missing,
        settings,
        pinnedVersions(),
        platform,
        note,
      ))
        found.set(name, path);
      return remember(found, env);
    } catch (error) {
      if (!isArchiveError(error) || error.code === 'refused') throw error;
      whyNotDownloaded = `the download failed: ${error.message}`;
      // what did arrive stays; only the rest is built
      for (const name of missing) {
        const path = downloaded(name, env);
        if (path !== undefined) found.set(name, path);
      }
    }
  }
  missing = names.filter((name) => !found.has(name));
  if (missing.length === 0) return remember(found, env);
  const build = options.build;
  if (build === undefined && !hasGo(env))
    throw new Error(
      `no ${missing.join(', ')} found: ${whyNotDownloaded}, and Go is not installed; ` +
        `set KUBEBUS_ASSETS to a directory of them, ${settings.enabled ? 'KUBEBUS_ENVTEST_INDEX_URL and KUBEBUS_NATS_RELEASES_URL to a mirror' : 'unset KUBEBUS_NO_DOWNLOAD to download them'}, or install Go >= 1.26`,
    );
  note(
    `${whyNotDownloaded}; using the Go build for ${missing.join(', ')} (test/bed/servers/build.sh: minutes the first time)`,
  );
  const dir = (build ?? serversBinDir)();
  for (const name of missing) found.set(name, join(dir, name));
  return remember(found, env);
}

function remember(
  found: Map<ServerBinary, string>,
  env: NodeJS.ProcessEnv,
): ReadonlyMap<ServerBinary, string> {
  for (const [name, path] of found) cached.set(keyOf(name, env), path);
  return found;
}

/** Fails first, and clearly, when a server can be found, fetched or built nowhere. */
export async function requireServers(
  names: readonly ServerBinary[] = ['kube-apiserver', 'etcd', 'nats-server'],
): Promise<void> {
  await resolveServers(names);
}

export function serverBinary(name: ServerBinary): string {
  return findServer(name);
}
