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
import { fetchText } from './archive-download.js';
import { ArchiveError } from './archive-error.js';
import {
  checkedUrl,
  findEnvtestArchive,
  findNatsArchive,
  natsArchiveName,
  parseDigestFile,
} from './archive-index.js';
import { cachedBinary, fetchBinaries, type Artifact } from './archive-install.js';
import type { DownloadSettings, PinnedVersions, Platform } from './archive-sources.js';
import { vettedDigest } from './archive-sums.js';

export type FetchableServer = 'kube-apiserver' | 'etcd' | 'kube-controller-manager' | 'nats-server';

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
  return cachedBinary(settings.archivesDir, ARTIFACT_OF[name](settings, versions, platform), name);
}

/**
 * Downloads what `names` need into the cache and returns where each binary is.
 * Throws an ArchiveError: `unavailable` (go on to the Go build) or `refused`.
 */
export function fetchServers(
  names: readonly FetchableServer[],
  settings: DownloadSettings,
  versions: PinnedVersions,
  platform: Platform,
  note: (line: string) => void,
): Promise<ReadonlyMap<FetchableServer, string>> {
  const wanted = new Map(
    names.map((name) => [name, ARTIFACT_OF[name](settings, versions, platform)] as const),
  );
  return fetchBinaries(wanted, settings.archivesDir, settings.sumsFile, note);
}
