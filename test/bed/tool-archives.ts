// kustomize and helm from their upstream release archives, through the same
// installer as the servers (archive-install.ts): helm's
// `helm-<v>-<os>-<arch>.tar.gz` (holding `<os>-<arch>/helm`) with the
// `.sha256sum` published beside it, and kustomize's
// `kustomize_<v>_<os>_<arch>.tar.gz` (holding `kustomize`) with its release's
// `checksums.txt` (goreleaser). KUBEBUS_SERVER_SUMS, when set, is the only
// source of digests here too.
import { fetchText } from './archive-download.js';
import { ArchiveError } from './archive-error.js';
import { checkedUrl, parseChecksums, parseDigestFile } from './archive-index.js';
import { cachedBinary, fetchBinaries, type Artifact } from './archive-install.js';
import type { Platform } from './archive-sources.js';
import { vettedDigest } from './archive-sums.js';
import type { ToolSettings, ToolVersions } from './tool-sources.js';

export type FetchableTool = 'kustomize' | 'helm';

function helm(settings: ToolSettings, versions: ToolVersions, platform: Platform): Artifact {
  const dir = `helm-${versions.helm}-${platform.os}-${platform.arch}`;
  const name = `${dir}.tar.gz`;
  return {
    dir,
    members: new Map([['helm', `${platform.os}-${platform.arch}/helm`]]),
    extras: new Map(),
    versions: new Map([['helm', versions.helm]]),
    // `helm version --short` adds `+g<commit>`; the template prints the version alone
    versionArgs: new Map([['helm', ['version', '--template', '{{.Version}}']]]),
    async locate(vetted) {
      const base = checkedUrl(settings.helmReleasesUrl, 'KUBEBUS_HELM_RELEASES_URL');
      const url = `${base}/${name}`;
      if (vetted !== undefined) return { name, url, ...vettedDigest(vetted, [name]) };
      const text = await fetchText(`${url}.sha256sum`);
      const digest = parseChecksums(text).get(name) ?? parseDigestFile(text, 'sha256');
      if (digest?.length !== 64)
        throw new ArchiveError('unavailable', `${url}.sha256sum holds no sha256 for ${name}`);
      return { name, url, algorithm: 'sha256', digest };
    },
  };
}

function kustomize(settings: ToolSettings, versions: ToolVersions, platform: Platform): Artifact {
  const dir = `kustomize_${versions.kustomize}_${platform.os}_${platform.arch}`;
  const name = `${dir}.tar.gz`;
  return {
    dir,
    members: new Map([['kustomize', 'kustomize']]),
    extras: new Map(),
    versions: new Map([['kustomize', versions.kustomize]]),
    versionArgs: new Map([['kustomize', ['version']]]),
    async locate(vetted) {
      const base = checkedUrl(settings.kustomizeReleasesUrl, 'KUBEBUS_KUSTOMIZE_RELEASES_URL');
      // the release's tag is kustomize/<v>: one path segment, its slash escaped
      const release = `${base}/kustomize%2F${versions.kustomize}`;
      const url = `${release}/${name}`;
      if (vetted !== undefined) return { name, url, ...vettedDigest(vetted, [name]) };
      const sumsUrl = `${release}/checksums.txt`;
      const digest = parseChecksums(await fetchText(sumsUrl)).get(name);
      if (digest?.length !== 64)
        throw new ArchiveError('unavailable', `${sumsUrl} lists no sha256 for ${name}`);
      return { name, url, algorithm: 'sha256', digest };
    },
  };
}

const ARTIFACT_OF: Record<FetchableTool, typeof helm> = { helm, kustomize };

/** The tool from an earlier download, if the cache has it. */
export function cachedTool(
  name: FetchableTool,
  settings: ToolSettings,
  versions: ToolVersions,
  platform: Platform,
): string | undefined {
  return cachedBinary(settings.archivesDir, ARTIFACT_OF[name](settings, versions, platform), name);
}

/**
 * Downloads what `names` need into the cache and returns where each tool is.
 * Throws an ArchiveError: `unavailable` (go on to the Go build) or `refused`.
 */
export function fetchTools(
  names: readonly FetchableTool[],
  settings: ToolSettings,
  versions: ToolVersions,
  platform: Platform,
  note: (line: string) => void,
): Promise<ReadonlyMap<FetchableTool, string>> {
  const wanted = new Map(
    names.map((name) => [name, ARTIFACT_OF[name](settings, versions, platform)] as const),
  );
  return fetchBinaries(wanted, settings.archivesDir, settings.sumsFile, note);
}
