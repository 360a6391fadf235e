// The CRD files the deployment tests check against, taken out of the Go
// modules that publish them without the Go toolchain: the module zip comes
// from a Go module cache that already holds it (no network), else from the
// module proxy (GOPROXY's protocol is plain HTTPS:
// `<proxy>/<module>/@v/<version>.zip`), or last from `go mod download`;
// whichever it is, its `h1:` hash (what go.sum and the checksum database
// record) must be the pinned one before a file is read out of it. The files
// are cached per module pin (version, h1: and file list), put in place with
// one rename.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { download } from './archive-download.js';
import { hash1 } from './archive-dirhash.js';
import { ArchiveError, reasonOf, redacted } from './archive-error.js';
import { safeUrl } from './archive-index.js';
import { makeStaging, putInPlace } from './archive-staging.js';
import { readZip, type Zip } from './archive-zip.js';
import { hasGo } from './binaries.js';
import {
  CRD_MODULES,
  toolSettingsOf,
  type CrdModule,
  type CrdSet,
  type ToolSettings,
} from './tool-sources.js';
import { isArchiveError } from './archive-error.js';

/** Go's module path escaping: an upper-case letter becomes `!` and its lower case. */
export const escapedModule = (module: string) =>
  module.replace(/[A-Z]/g, (letter) => `!${letter.toLowerCase()}`);

/** A short hash of what is pinned beside the version: another h1: or file list is another folder. */
const pinKey = (module: CrdModule) =>
  createHash('sha256')
    .update(JSON.stringify([module.h1, [...module.files]]))
    .digest('hex')
    .slice(0, 12);

export const moduleDir = (archivesDir: string, module: CrdModule) =>
  join(
    archivesDir,
    `module-${module.module.replaceAll('/', '_')}@${module.version}-${pinKey(module)}`,
  );

const filesOf = (archivesDir: string, module: CrdModule) =>
  [...module.files.values()].map((file) => join(moduleDir(archivesDir, module), file));

const cachedModule = (archivesDir: string, module: CrdModule) =>
  filesOf(archivesDir, module).every((file) => existsSync(file));

/** The files of `set`, if every one is in the cache. */
export function cachedCrds(archivesDir: string, set: CrdSet): string[] | undefined {
  const modules = CRD_MODULES.filter((module) => module.set === set);
  return modules.every((module) => cachedModule(archivesDir, module))
    ? modules.flatMap((module) => filesOf(archivesDir, module))
    : undefined;
}

const NEXT_STEP =
  'if it happens again, the proxy or mirror serves a different module: fix it, or set GOPROXY to another';

/** Checks the zip at `file` against the pin and writes its CRD files into `staging`. */
async function unpack(file: string, module: CrdModule, from: string, staging: string) {
  const named = `${module.module}@${module.version}`;
  let zip: Zip;
  let h1: string;
  try {
    zip = await readZip(file);
    h1 = hash1(zip);
  } catch (error) {
    throw new ArchiveError(
      'refused',
      `${named} from ${from} is not a readable module zip (${reasonOf(error)}): retry; ${NEXT_STEP}`,
      { cause: error },
    );
  }
  if (h1 !== module.h1)
    throw new ArchiveError(
      'refused',
      `checksum mismatch for ${named} from ${from}: ${h1} is not the pinned ${module.h1} (go.sum's hash): ${NEXT_STEP}`,
    );
  for (const [path, name] of module.files) {
    const member = `${named}/${path}`;
    if (!zip.names.includes(member))
      throw new ArchiveError('refused', `${named} from ${from} has no ${path}: ${NEXT_STEP}`);
    writeFileSync(join(staging, name), zip.read(member), { mode: 0o644, flag: 'wx' });
  }
}

/** Puts the module's CRD files in the cache from the zip `obtain` leaves in the staging folder. */
async function install(
  module: CrdModule,
  archivesDir: string,
  from: string,
  obtain: (staging: string) => Promise<string>,
): Promise<void> {
  mkdirSync(archivesDir, { recursive: true });
  const final = moduleDir(archivesDir, module);
  const staging = makeStaging(archivesDir, final.slice(archivesDir.length + 1));
  try {
    const file = await obtain(staging);
    await unpack(file, module, from, staging);
    if (file.startsWith(staging)) rmSync(file);
    putInPlace(staging, final);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** From the module proxy. Throws `unavailable` (offline, not served) or `refused`. */
export async function fetchModule(
  module: CrdModule,
  settings: ToolSettings,
  note: (line: string) => void,
): Promise<void> {
  if (settings.goproxy === undefined)
    throw new ArchiveError('unavailable', 'GOPROXY names no module proxy');
  // Go's own proxy client takes file: and plain http proxies; here they are passed over
  // (the zip is h1:-checked either way), and go mod download may still take them
  if (safeUrl(settings.goproxy) === undefined)
    throw new ArchiveError(
      'unavailable',
      `GOPROXY's ${settings.goproxy} is not an https URL (plain http only on loopback), so it is passed over`,
    );
  const url = `${settings.goproxy}/${escapedModule(module.module)}/@v/${module.version}.zip`;
  await install(module, settings.archivesDir, url, async (staging) => {
    const file = join(staging, '.download.zip');
    await download(url, file, 'sha256');
    return file;
  });
  // said once it is done (a few MB): a proxy that does not answer gives one line, the failure
  note(`downloaded ${module.module}@${module.version} from ${new URL(url).host}, its h1: checked`);
}

/** The Go module cache's directory: GOMODCACHE, else the first GOPATH's pkg/mod, else ~/go/pkg/mod. */
export function goModCache(env: NodeJS.ProcessEnv): string | undefined {
  const given = env['GOMODCACHE'];
  if (given !== undefined && given !== '') return given;
  const gopath = (env['GOPATH'] ?? '').split(':')[0];
  if (gopath !== undefined && gopath !== '') return join(gopath, 'pkg', 'mod');
  const home = env['HOME'];
  return home === undefined || home === '' ? undefined : join(home, 'go', 'pkg', 'mod');
}

/** The zip a Go module cache holds for `module`, if it holds it. */
export function zipInModCache(module: CrdModule, env: NodeJS.ProcessEnv): string | undefined {
  const cache = goModCache(env);
  if (cache === undefined) return undefined;
  const zip = join(
    cache,
    'cache',
    'download',
    escapedModule(module.module),
    '@v',
    `${module.version}.zip`,
  );
  return existsSync(zip) ? zip : undefined;
}

/** From a Go module cache that holds the zip (Go fetched it before): no network, no Go. */
export async function fromModCache(
  module: CrdModule,
  zip: string,
  archivesDir: string,
): Promise<void> {
  await install(module, archivesDir, zip, () => Promise.resolve(zip));
}

const run = promisify(execFile);

/** `go mod download`, the last resort: Go's own fetch (GOPROXY, GOFLAGS, GONOSUMDB as set). */
export async function goModDownload(
  module: CrdModule,
  archivesDir: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const named = `${module.module}@${module.version}`;
  let zip: unknown;
  try {
    const printed = await run('go', ['mod', 'download', '-json', named], {
      env,
      cwd: new URL('./tools/', import.meta.url),
      timeout: 600_000,
    });
    zip = (JSON.parse(printed.stdout) as { Zip?: unknown }).Zip;
  } catch (error) {
    // -json reports the module's error on stdout, as {"Error": "..."}
    let reason = reasonOf(error);
    try {
      const said = (JSON.parse((error as { stdout?: string }).stdout ?? '') as { Error?: unknown })
        .Error;
      if (typeof said === 'string') reason = said.split('\n')[0] ?? said;
    } catch {
      // not JSON: the command's own failure stands
    }
    throw new Error(
      redacted(
        `go mod download ${named} failed (${reason}): set GOPROXY to a reachable module proxy`,
      ),
      { cause: error },
    );
  }
  if (typeof zip !== 'string') throw new Error(`go mod download ${named} printed no zip`);
  await install(module, archivesDir, zip, () => Promise.resolve(zip));
}

/**
 * The CRD files, each module from the cache, else a Go module cache that holds
 * its zip (no network), else the module proxy, else `go mod download`. A
 * refused download (a zip whose h1: is not the pinned one) throws; a refused
 * zip in the Go module cache is passed over for the proxy.
 */
export async function resolveCrds(
  env: NodeJS.ProcessEnv,
  note: (line: string) => void,
): Promise<ReadonlyMap<CrdSet, readonly string[]>> {
  const settings = toolSettingsOf(env);
  for (const module of CRD_MODULES) {
    if (cachedModule(settings.archivesDir, module)) continue;
    const named = `${module.module}@${module.version}`;
    const zip = zipInModCache(module, env);
    let inModCache = 'no Go module cache holds it';
    if (zip !== undefined) {
      try {
        await fromModCache(module, zip, settings.archivesDir);
        note(`took ${named} from the Go module cache, its h1: checked`);
        continue;
      } catch (error) {
        if (!isArchiveError(error)) throw error;
        inModCache = `the Go module cache's zip is refused: ${error.message}`;
      }
    }
    let why = settings.enabled
      ? 'GOPROXY names no module proxy'
      : 'downloads are off (KUBEBUS_NO_DOWNLOAD=1)';
    if (settings.enabled && settings.goproxy !== undefined) {
      try {
        await fetchModule(module, settings, note);
        continue;
      } catch (error) {
        if (!isArchiveError(error) || error.code === 'refused') throw error;
        why = `the download failed: ${error.message}`;
      }
    }
    if (hasGo(env)) {
      note(`${why}; fetching ${named} with go mod download`);
      await goModDownload(module, settings.archivesDir, env);
    } else
      throw new Error(
        `no ${named} (the ${module.set} CRDs): ${why}, ${inModCache}, and Go is not installed; set GOPROXY to a reachable module proxy, or install Go >= 1.26`,
      );
  }
  const crds = new Map<CrdSet, readonly string[]>();
  for (const set of ['knative', 'prometheus-operator'] as const) {
    const files = cachedCrds(settings.archivesDir, set);
    if (files === undefined)
      throw new Error(`the ${set} CRDs are not in the cache after their download`);
    crds.set(set, files);
  }
  return crds;
}
