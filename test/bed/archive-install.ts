// Puts one upstream artifact in the cache: locates it (and its digest), downloads
// it into a staging folder hashing it as it is written, compares the digest
// before anything reads it, reads out only the members asked for (to paths
// chosen here: an archive's names never become paths), checks each binary runs
// at the pinned version, then puts the folder in place with one rename. The
// servers (archives.ts) and the test tools (tool-archives.ts) are artifacts.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { download, sameDigest } from './archive-download.js';
import { ArchiveError, reasonOf } from './archive-error.js';
import type { ListedArchive } from './archive-index.js';
import { makeStaging, putInPlace } from './archive-staging.js';
import { extractMembers } from './archive-tar.js';
import { readVettedSums, type VettedSums } from './archive-sums.js';
import { executable, namesVersion } from './server-version.js';

export interface Artifact {
  /** its directory under archives/, named after the archive */
  readonly dir: string;
  /** binary → its name inside the archive */
  readonly members: ReadonlyMap<string, string>;
  /** the download is the binary itself, not an archive */
  readonly bare?: true;
  /** extracted when present (kubectl, which the envtest archive carries for users) */
  readonly extras: ReadonlyMap<string, string>;
  /** the version each binary must print; etcd's is the envtest archive's choice */
  readonly versions: ReadonlyMap<string, string | undefined>;
  /** what makes a binary print its version (default `--version`) */
  readonly versionArgs?: ReadonlyMap<string, readonly string[]>;
  /** where the archive is, and its digest: the vetted one if given, else the host's */
  locate(vetted: VettedSums | undefined): Promise<ListedArchive>;
}

const run = promisify(execFile);

/** Refuses a binary that does not run, or runs at another version than the pinned one. */
async function checkVersion(
  path: string,
  binary: string,
  version: string | undefined,
  from: string,
  args: readonly string[],
) {
  let printed: string;
  try {
    printed = (await run(path, args, { timeout: 20_000 })).stdout;
  } catch (error) {
    throw new ArchiveError(
      'refused',
      `${binary} from ${from} does not run here (${reasonOf(error)}): check the mirror serves this platform's archive, or set KUBEBUS_NO_DOWNLOAD=1`,
      { cause: error },
    );
  }
  if (!namesVersion(printed, version))
    throw new ArchiveError(
      'refused',
      `${binary} from ${from} is not ${version ?? 'a release'} (it prints ${JSON.stringify(printed.trim().split('\n')[0])}): fix the mirror, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
}

const NEXT_STEP =
  'retry; if it happens again, the host or mirror serves a damaged file: fix it, or set KUBEBUS_NO_DOWNLOAD=1 to build from source with Go';

async function install(
  artifact: Artifact,
  archivesDir: string,
  vetted: VettedSums | undefined,
  note: (line: string) => void,
): Promise<void> {
  const listed = await artifact.locate(vetted);
  mkdirSync(archivesDir, { recursive: true });
  const staging = makeStaging(archivesDir, artifact.dir);
  try {
    const file = join(staging, `.download-${listed.name}`);
    note(`downloading ${listed.name} from ${new URL(listed.url).host} ...`);
    const digest = await download(listed.url, file, listed.algorithm);
    if (!sameDigest(listed.digest, digest))
      throw new ArchiveError(
        'refused',
        `checksum mismatch for ${listed.name} from ${listed.url}: ${listed.algorithm} ${digest.slice(0, 16)}… is not the ${vetted === undefined ? 'published' : `vetted (${vetted.file})`} ${listed.digest.slice(0, 16)}…: ${NEXT_STEP}`,
      );
    if (artifact.bare === true) {
      for (const binary of artifact.members.keys()) renameSync(file, join(staging, binary));
    } else {
      const wanted = new Map<string, string>();
      for (const [binary, member] of [...artifact.members, ...artifact.extras])
        wanted.set(member, join(staging, binary));
      let found: ReadonlySet<string>;
      try {
        found = await extractMembers(file, wanted);
      } catch (error) {
        throw new ArchiveError(
          'refused',
          `${listed.name} from ${listed.url} is not a readable .tar.gz (${reasonOf(error)}): ${NEXT_STEP}`,
          { cause: error },
        );
      }
      const missing = [...artifact.members.values()].filter((member) => !found.has(member));
      if (missing.length > 0)
        throw new ArchiveError(
          'refused',
          `${listed.name} from ${listed.url} has no ${missing.join(', ')}: ${NEXT_STEP}`,
        );
      rmSync(file);
    }
    for (const binary of [...artifact.members.keys(), ...artifact.extras.keys()]) {
      const path = join(staging, binary);
      try {
        chmodSync(path, 0o755);
      } catch {
        continue; // an absent extra
      }
      if (artifact.members.has(binary))
        await checkVersion(
          path,
          binary,
          artifact.versions.get(binary),
          listed.url,
          artifact.versionArgs?.get(binary) ?? ['--version'],
        );
    }
    const final = join(archivesDir, artifact.dir);
    putInPlace(staging, final);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Installs each artifact (at once) into `archivesDir`. Throws an ArchiveError:
 * `refused` if any was refused (it outranks an outage: it is what a person
 * must look at), else `unavailable`.
 */
export async function installAll(
  artifacts: readonly Artifact[],
  archivesDir: string,
  sumsFile: string | undefined,
  note: (line: string) => void,
): Promise<void> {
  const vetted =
    sumsFile === undefined || artifacts.length === 0 ? undefined : readVettedSums(sumsFile);
  const installed = await Promise.allSettled(
    artifacts.map((artifact) => install(artifact, archivesDir, vetted, note)),
  );
  const failures = installed.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const failure =
    failures.find((error) => error instanceof ArchiveError && error.code === 'refused') ??
    failures[0];
  if (failure !== undefined)
    throw failure instanceof ArchiveError
      ? failure
      : new ArchiveError('unavailable', `the download failed (${reasonOf(failure)})`, {
          cause: failure,
        });
}

/** Where `binary` of `artifact` is in the cache, if an earlier download put it there. */
export function cachedBinary(
  archivesDir: string,
  artifact: Artifact,
  binary: string,
): string | undefined {
  const path = join(archivesDir, artifact.dir, binary);
  return executable(path) ? path : undefined;
}

/**
 * Downloads the artifacts `wanted` (binary → its artifact) lacks in the cache
 * and returns where each binary is. Throws an ArchiveError: `unavailable` (go
 * on to the Go build) or `refused`.
 */
export async function fetchBinaries<Name extends string>(
  wanted: ReadonlyMap<Name, Artifact>,
  archivesDir: string,
  sumsFile: string | undefined,
  note: (line: string) => void,
): Promise<ReadonlyMap<Name, string>> {
  const artifacts = new Map<string, Artifact>();
  for (const [binary, artifact] of wanted)
    if (cachedBinary(archivesDir, artifact, binary) === undefined)
      artifacts.set(artifact.dir, artifact);
  await installAll([...artifacts.values()], archivesDir, sumsFile, note);
  const paths = new Map<Name, string>();
  for (const [binary, artifact] of wanted) {
    const path = cachedBinary(archivesDir, artifact, binary);
    if (path === undefined)
      throw new ArchiveError('refused', `${binary} is not in the cache after its download`);
    paths.set(binary, path);
  }
  return paths;
}
