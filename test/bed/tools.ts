// Finds the tools some tests check the deployment files with, in the servers'
// order (binaries.ts): a directory named by KUBEBUS_TOOLS; the tool on PATH at
// a supported version; an earlier download or Go build in the cache; the
// upstream release archives (kustomize, helm), checksum-verified and cached
// (tool-archives.ts); last, the Go build (tools/build.sh). composecheck, which
// no one publishes prebuilt, is `docker compose config` where Docker Compose v2
// is installed, else the Go build, else one line naming what to install. The
// CRD files come from their Go modules without Go (tool-crds.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isArchiveError } from './archive-error.js';
import { cacheRoot, platformOf } from './archive-sources.js';
import { builtBy, hasGo, newestBuild } from './binaries.js';
import { executable, namesVersion } from './server-version.js';
import { cachedTool, fetchTools, type FetchableTool } from './tool-archives.js';
import { cachedCrds, resolveCrds } from './tool-crds.js';
import { pinnedTools, toolSettingsOf, type CrdSet } from './tool-sources.js';

export const TOOL_BINARIES = ['kustomize', 'helm', 'composecheck'] as const;
export type ToolBinary = (typeof TOOL_BINARIES)[number];
const FETCHABLE: readonly FetchableTool[] = ['kustomize', 'helm'];

/** How each tool prints its version, and the major.minor range the tests are written for. */
const VERSION: Record<FetchableTool, { args: readonly string[]; major: number; minor: number }> = {
  kustomize: { args: ['version'], major: 5, minor: 0 },
  helm: { args: ['version', '--template', '{{.Version}}'], major: 3, minor: 12 },
};

function printed(path: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(path, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
    });
  } catch {
    return undefined;
  }
}

/** Same major, at least the minor: kustomize 5.x, helm 3.12 and later 3.x. */
function supported(name: FetchableTool, path: string): boolean {
  const match = /v?(\d+)\.(\d+)\.\d+/.exec(printed(path, VERSION[name].args) ?? '');
  const { major, minor } = VERSION[name];
  return match !== null && Number(match[1]) === major && Number(match[2]) >= minor;
}

function onPath(name: ToolBinary, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || !executable(join(dir, name))) continue;
    const path = join(dir, name);
    // the first one found decides, as a shell would run it; an unsupported one is passed over
    return name === 'composecheck' || supported(name, path) ? path : undefined;
  }
  return undefined;
}

/** A finished Go build in the cache (tools/<key>/bin), kustomize and helm at their pins; newest first. */
function goBuilt(name: ToolBinary, env: NodeJS.ProcessEnv): string | undefined {
  const dir = newestBuild(join(cacheRoot(env), 'tools'), pinnedBuild);
  return dir === undefined ? undefined : join(dir, name);
}

/** Build directories already checked, so each tool runs once per process. */
const checkedBuilds = new Map<string, boolean>();

function pinnedBuild(bin: string): boolean {
  const known = checkedBuilds.get(bin);
  if (known !== undefined) return known;
  const pins = pinnedTools();
  const ok =
    TOOL_BINARIES.every((tool) => executable(join(bin, tool))) &&
    FETCHABLE.every((tool) =>
      namesVersion(printed(join(bin, tool), VERSION[tool].args) ?? '', pins[tool]),
    );
  checkedBuilds.set(bin, ok);
  return ok;
}

/**
 * Docker Compose v2 or later behind `docker compose`: compose v1, or
 * podman-compose, may answer there too, but they run another loader.
 */
function hasDockerCompose(env: NodeJS.ProcessEnv): boolean {
  const run = spawnSync('docker', ['compose', 'version', '--short'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
  });
  const major = /^v?(\d+)\./.exec(run.stdout?.trim() ?? '')?.[1];
  return run.status === 0 && major !== undefined && Number(major) >= 2;
}

/**
 * composecheck's contract (a compose file and an env file in; the project
 * compose-go resolves, as JSON, out; the loader's error and a non-zero exit
 * otherwise) kept by `docker compose config`, which runs the same loader.
 */
const DOCKER_COMPOSECHECK = `#!/bin/sh
# composecheck through Docker Compose v2 (written by test/bed/tools.ts)
[ $# -ge 1 ] || { echo "usage: composecheck <compose.yml> [env file]" >&2; exit 2; }
# no dirname: the caller's PATH may hold docker alone
case "$1" in */*) dir=\${1%/*} ;; *) dir=. ;; esac
if [ $# -ge 2 ]; then
  exec docker compose --project-directory "$dir" -f "$1" --env-file "$2" config --format json
fi
exec docker compose --project-directory "$dir" -f "$1" config --format json
`;

function dockerComposecheck(env: NodeJS.ProcessEnv): string | undefined {
  if (!hasDockerCompose(env)) return undefined;
  const dir = join(cacheRoot(env), 'tools', 'docker-compose');
  const path = join(dir, 'composecheck');
  mkdirSync(dir, { recursive: true });
  const staged = `${path}.${process.pid}`;
  writeFileSync(staged, DOCKER_COMPOSECHECK, { mode: 0o755 });
  renameSync(staged, path);
  return path;
}

/** Everything short of a download or the Go build; undefined when none has it. */
function foundWithoutFetching(name: ToolBinary, env: NodeJS.ProcessEnv): string | undefined {
  const given = env['KUBEBUS_TOOLS'];
  if (given !== undefined && given !== '' && executable(join(given, name)))
    return join(given, name);
  const platform = platformOf();
  const downloaded =
    name === 'composecheck' || platform === undefined
      ? undefined
      : cachedTool(name, toolSettingsOf(env), pinnedTools(), platform);
  return (
    onPath(name, env) ??
    downloaded ??
    goBuilt(name, env) ??
    (name === 'composecheck' ? dockerComposecheck(env) : undefined)
  );
}

export interface ResolveToolsOptions {
  /** the Go build; returns the directory holding the three binaries */
  readonly build?: () => string;
  readonly note?: (line: string) => void;
}

export interface ResolvedTools {
  readonly tools: ReadonlyMap<ToolBinary, string>;
  readonly crds: ReadonlyMap<CrdSet, readonly string[]>;
}

/** The Go build of the three tools (tools/build.sh); minutes the first time. */
export const toolsBinDir = () =>
  builtBy(
    './tools/build.sh',
    TOOL_BINARIES,
    'set KUBEBUS_TOOLS to a directory holding kustomize, helm and composecheck, or let kubebus download kustomize and helm (unset KUBEBUS_NO_DOWNLOAD)',
  );

/**
 * Finds every tool, then the CRD files (resolveToolBinaries, resolveCrds).
 * Every error is one line that names the next step.
 */
export async function resolveTools(
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveToolsOptions = {},
): Promise<ResolvedTools> {
  const note = options.note ?? ((line: string) => process.stderr.write(`kubebus: ${line}\n`));
  const tools = await resolveToolBinaries(env, { ...options, note });
  return { tools, crds: await resolveCrds(env, note) };
}

/**
 * Finds kustomize, helm and composecheck, downloading kustomize and helm
 * when missing and building with Go what is still missing. An unavailable
 * download goes on to the Go build with a note; a refused one throws.
 */
export async function resolveToolBinaries(
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveToolsOptions = {},
): Promise<ReadonlyMap<ToolBinary, string>> {
  const note = options.note ?? ((line: string) => process.stderr.write(`kubebus: ${line}\n`));
  const settings = toolSettingsOf(env);
  const tools = new Map<ToolBinary, string>();
  for (const name of TOOL_BINARIES) {
    const path = foundWithoutFetching(name, env);
    if (path !== undefined) tools.set(name, path);
  }
  const platform = platformOf();
  const fetchable = FETCHABLE.filter((name) => !tools.has(name));
  let why = '';
  if (fetchable.length > 0) {
    if (!settings.enabled) why = 'downloads are off (KUBEBUS_NO_DOWNLOAD=1)';
    else if (platform === undefined)
      why = `no prebuilt tools are published for ${process.platform}/${process.arch}`;
    else {
      try {
        const fetched = await fetchTools(fetchable, settings, pinnedTools(), platform, note);
        for (const [name, path] of fetched) tools.set(name, path);
      } catch (error) {
        if (!isArchiveError(error) || error.code === 'refused') throw error;
        why = `the download failed: ${error.message}`;
        for (const name of fetchable) {
          const path = cachedTool(name, settings, pinnedTools(), platform);
          if (path !== undefined) tools.set(name, path);
        }
      }
    }
  }
  const missing = TOOL_BINARIES.filter((name) => !tools.has(name));
  if (missing.length > 0) {
    const reasons = [
      ...(why === '' ? [] : [why]),
      ...(missing.includes('composecheck')
        ? ['Docker Compose v2 (`docker compose`) is not installed']
        : []),
    ].join('; ');
    if (options.build === undefined && !hasGo(env)) {
      const fetchableMissing = missing.some((name) => name !== 'composecheck');
      const steps = [
        ...(fetchableMissing
          ? [
              'set KUBEBUS_TOOLS to a directory holding them',
              settings.enabled
                ? 'point KUBEBUS_HELM_RELEASES_URL and KUBEBUS_KUSTOMIZE_RELEASES_URL at a mirror'
                : 'unset KUBEBUS_NO_DOWNLOAD to download them',
            ]
          : []),
        ...(missing.includes('composecheck') ? ['install Docker Compose v2'] : []),
      ];
      throw new Error(
        `no ${missing.join(', ')} found: ${reasons}, and Go is not installed; ${steps.join(', ')}, or install Go >= 1.26`,
      );
    }
    note(
      `${reasons}; using the Go build for ${missing.join(', ')} (test/bed/tools/build.sh: minutes the first time)`,
    );
    const dir = (options.build ?? toolsBinDir)();
    for (const name of missing) tools.set(name, join(dir, name));
  }
  return tools;
}

const fetchScript = fileURLToPath(new URL('./fetch-tools.ts', import.meta.url));

/**
 * Runs fetch-tools.ts for the tools or the CRD files (downloads, or the Go
 * build) once, for a test that needs one; false when it failed, which may have
 * been over something this test does not need: the caller looks again.
 */
function fetchOnce(what: 'tools' | 'crds', env: NodeJS.ProcessEnv): boolean {
  const result = spawnSync(process.execPath, ['--import', 'tsx', fetchScript, what], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  return result.status === 0;
}

const missingAfter = (what: string, fetched: boolean) =>
  fetched
    ? new Error(`${what} is missing after test/bed/fetch-tools.ts`)
    : new Error(`${what} could not be found, fetched or built (see the line above)`);

/** kustomize, helm or composecheck; fetched or built (once) if the cache lacks it. */
export function toolBinary(name: ToolBinary, env: NodeJS.ProcessEnv = process.env): string {
  const found = foundWithoutFetching(name, env);
  if (found !== undefined) return found;
  const fetched = fetchOnce('tools', env);
  const path = foundWithoutFetching(name, env);
  if (path === undefined) throw missingAfter(name, fetched);
  return path;
}

/** The CRD files of `set`, in the order the module list names them. */
export function crdFiles(set: CrdSet, env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const archivesDir = toolSettingsOf(env).archivesDir;
  const cached = cachedCrds(archivesDir, set);
  if (cached !== undefined) return cached;
  const fetched = fetchOnce('crds', env);
  const files = cachedCrds(archivesDir, set);
  if (files === undefined) throw missingAfter(`the ${set} CRDs`, fetched);
  return files;
}
