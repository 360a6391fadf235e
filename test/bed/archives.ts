// Prebuilt servers, fetched and cached the way setup-envtest does: kube-apiserver
// and etcd from controller-tools' envtest archive (listed with its sha512 in the
// envtest index), nats-server from its release archive (SHA256SUMS beside it),
// and kube-controller-manager, which no envtest archive holds, as the bare
// release binary from dl.k8s.io (its .sha256 beside it). Each download is
// checked against its digest before it is read, the binaries are checked to
// run at the pinned version, and only then is the cache directory put in
// place (one rename), so a failure leaves nothing cached. The digests come
// from the same host (or mirror) as the archives, as with setup-envtest, unless
// KUBEBUS_SERVER_SUMS names a file of vetted ones (archive-sums.ts).
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { download, fetchText, sameDigest } from './archive-download.js';
import { ArchiveError, reasonOf } from './archive-error.js';
import { extractMembers } from './archive-tar.js';
import {
  findEnvtestArchive,
  findNatsArchive,
  natsArchiveName,
  parseDigestFile,
  safeUrl,
  type ListedArchive,
} from './archive-index.js';
import type { DownloadSettings, PinnedVersions, Platform } from './archive-sources.js';
import { makeStaging, releaseStaging } from './archive-staging.js';
import { readVettedSums, vettedDigest, type VettedSums } from './archive-sums.js';
import { executable, namesVersion } from './server-version.js';

export type FetchableServer = 'kube-apiserver' | 'etcd' | 'kube-controller-manager' | 'nats-server';

interface Artifact {
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
  /** where the archive is, and its digest: the vetted one if given, else the host's */
  locate(vetted: VettedSums | undefined): Promise<ListedArchive>;
}

function checkedUrl(url: string, variable: string): string {
  if (safeUrl(url) === undefined)
    throw new ArchiveError(
      'refused',
      `${variable}=${url} is not an https URL (plain http only on loopback): fix it, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
  return url;
}

function envtest(
  settings: DownloadSettings,
  versions: PinnedVersions,
  platform: Platform,
): Artifact {
  const inside = (binary: string) => `controller-tools/envtest/${binary}`;
  return {
    dir: `envtest-${versions.kubernetes}-${platform.os}-${platform.arch}`,
    members: new Map([
      ['kube-apiserver', inside('kube-apiserver')],
      ['etcd', inside('etcd')],
    ]),
    extras: new Map([['kubectl', inside('kubectl')]]),
    versions: new Map([
      ['kube-apiserver', versions.kubernetes],
      ['etcd', undefined],
    ]),
    async locate(vetted) {
      const url = checkedUrl(settings.envtestIndexUrl, 'KUBEBUS_ENVTEST_INDEX_URL');
      // the index still says where the archive is; only its hash is replaced
      const listed = findEnvtestArchive(await fetchText(url), url, versions.kubernetes, platform);
      return vetted === undefined ? listed : { ...listed, ...vettedDigest(vetted, [listed.name]) };
    },
  };
}

function nats(settings: DownloadSettings, versions: PinnedVersions, platform: Platform): Artifact {
  const dir = `nats-server-${versions.nats}-${platform.os}-${platform.arch}`;
  return {
    dir,
    // goreleaser wraps the archive in a directory named like it
    members: new Map([['nats-server', `${dir}/nats-server`]]),
    extras: new Map(),
    versions: new Map([['nats-server', versions.nats]]),
    async locate(vetted) {
      const base = checkedUrl(settings.natsReleasesUrl, 'KUBEBUS_NATS_RELEASES_URL');
      if (vetted !== undefined) {
        const name = natsArchiveName(versions.nats, platform);
        const url = `${base}/${versions.nats}/${name}`;
        return { name, url, ...vettedDigest(vetted, [name]) };
      }
      const sumsUrl = `${base}/${versions.nats}/SHA256SUMS`;
      return findNatsArchive(await fetchText(sumsUrl), sumsUrl, versions.nats, platform);
    },
  };
}

function controllerManager(
  settings: DownloadSettings,
  versions: PinnedVersions,
  platform: Platform,
): Artifact {
  const name = 'kube-controller-manager';
  return {
    dir: `${name}-${versions.kubernetes}-${platform.os}-${platform.arch}`,
    members: new Map([[name, name]]),
    bare: true,
    extras: new Map(),
    versions: new Map([[name, versions.kubernetes]]),
    async locate(vetted) {
      const base = checkedUrl(settings.kubeReleasesUrl, 'KUBEBUS_KUBE_RELEASES_URL');
      const path = `${versions.kubernetes}/bin/${platform.os}/${platform.arch}/${name}`;
      const url = `${base}/${path}`;
      // the bare name is the same for every version and platform, so the path
      // (sha256sum's output from a mirror's root) is looked up first
      if (vetted !== undefined) return { name, url, ...vettedDigest(vetted, [path, name]) };
      const digest = parseDigestFile(await fetchText(`${url}.sha256`), 'sha256');
      if (digest === undefined)
        throw new ArchiveError('unavailable', `${url}.sha256 holds no sha256 digest`);
      return { name, url, algorithm: 'sha256', digest };
    },
  };
}

const ARTIFACT_OF: Record<FetchableServer, typeof envtest> = {
  'kube-apiserver': envtest,
  etcd: envtest,
  'nats-server': nats,
  'kube-controller-manager': controllerManager,
};

/** The binary from an earlier download, if the cache has it. */
export function cachedDownload(
  name: FetchableServer,
  settings: DownloadSettings,
  versions: PinnedVersions,
  platform: Platform,
): string | undefined {
  const path = join(
    settings.archivesDir,
    ARTIFACT_OF[name](settings, versions, platform).dir,
    name,
  );
  return executable(path) ? path : undefined;
}

const run = promisify(execFile);

/** Refuses a binary that does not run, or runs at another version than the pinned one. */
async function checkVersion(
  path: string,
  binary: string,
  version: string | undefined,
  from: string,
) {
  let printed: string;
  try {
    printed = (await run(path, ['--version'], { timeout: 20_000 })).stdout;
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
  settings: DownloadSettings,
  vetted: VettedSums | undefined,
  note: (line: string) => void,
): Promise<void> {
  const listed = await artifact.locate(vetted);
  mkdirSync(settings.archivesDir, { recursive: true });
  const staging = makeStaging(settings.archivesDir, artifact.dir);
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
        await checkVersion(path, binary, artifact.versions.get(binary), listed.url);
    }
    const final = join(settings.archivesDir, artifact.dir);
    releaseStaging(staging);
    try {
      renameSync(staging, final);
    } catch (error) {
      // another process put the same download in place first: keep theirs
      if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? ''))
        throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Downloads what `names` need into the cache and returns where each binary is.
 * Throws an ArchiveError: `unavailable` (go on to the Go build) or `refused`.
 */
export async function fetchServers(
  names: readonly FetchableServer[],
  settings: DownloadSettings,
  versions: PinnedVersions,
  platform: Platform,
  note: (line: string) => void,
): Promise<ReadonlyMap<FetchableServer, string>> {
  const artifacts = new Map<string, Artifact>();
  for (const name of names) {
    const artifact = ARTIFACT_OF[name](settings, versions, platform);
    if (cachedDownload(name, settings, versions, platform) === undefined)
      artifacts.set(artifact.dir, artifact);
  }
  const vetted =
    settings.sumsFile === undefined || artifacts.size === 0
      ? undefined
      : readVettedSums(settings.sumsFile);
  const installed = await Promise.allSettled(
    [...artifacts.values()].map((artifact) => install(artifact, settings, vetted, note)),
  );
  const failures = installed.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  // a refusal outranks an outage: it is what a person must look at
  const failure =
    failures.find((error) => error instanceof ArchiveError && error.code === 'refused') ??
    failures[0];
  if (failure !== undefined)
    throw failure instanceof ArchiveError
      ? failure
      : new ArchiveError('unavailable', `the download failed (${reasonOf(failure)})`, {
          cause: failure,
        });
  const paths = new Map<FetchableServer, string>();
  for (const name of names) {
    const path = cachedDownload(name, settings, versions, platform);
    if (path === undefined)
      throw new ArchiveError('refused', `${name} is not in the cache after its download`);
    paths.set(name, path);
  }
  return paths;
}
