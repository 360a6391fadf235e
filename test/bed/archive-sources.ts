// What the prebuilt downloads are and where they come from: the versions the Go
// build pins (read from its go.mod files, so both paths give the same servers),
// this machine's platform, the base URLs (mirrors and air-gapped sites set
// their own) and the cache directory.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_ENVTEST_INDEX_URL =
  'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';
export const DEFAULT_NATS_RELEASES_URL = 'https://github.com/nats-io/nats-server/releases/download';
export const DEFAULT_KUBE_RELEASES_URL = 'https://dl.k8s.io';

export interface PinnedVersions {
  /** kube-apiserver, kube-controller-manager, and the envtest archive's version */
  readonly kubernetes: string;
  readonly etcd: string;
  readonly nats: string;
}

/** The version a go.mod requires of `module` (with its leading v). */
export function requiredVersion(goMod: string, module: string): string | undefined {
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(
    `^[ \\t]*(?:require[ \\t]+)?${escaped}[ \\t]+(v\\d+\\.\\d+\\.\\d+)\\b`,
    'm',
  ).exec(goMod)?.[1];
}

/** The versions test/bed/servers/build.sh builds. */
export function pinnedVersions(): PinnedVersions {
  // relative to this module: test/bed/ in the repository, dist/ in the package
  const read = (dir: string) =>
    readFileSync(new URL(`./servers/${dir}/go.mod`, import.meta.url), 'utf8');
  const kube = read('kube');
  const nats = read('nats');
  const kubernetes = requiredVersion(kube, 'k8s.io/kubernetes');
  const etcd = requiredVersion(kube, 'go.etcd.io/etcd/server/v3');
  const natsServer = requiredVersion(nats, 'github.com/nats-io/nats-server/v2');
  if (kubernetes === undefined || etcd === undefined || natsServer === undefined)
    throw new Error('test/bed/servers/*/go.mod pin no kubernetes, etcd or nats-server version');
  return { kubernetes, etcd, nats: natsServer };
}

export interface Platform {
  readonly os: 'linux' | 'darwin';
  readonly arch: 'amd64' | 'arm64';
}

/** The platform in the upstream archives' names, or undefined where none is published. */
export function platformOf(
  os: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): Platform | undefined {
  const goOs = os === 'linux' || os === 'darwin' ? os : undefined;
  const goArch = arch === 'x64' ? 'amd64' : arch === 'arm64' ? 'arm64' : undefined;
  return goOs === undefined || goArch === undefined ? undefined : { os: goOs, arch: goArch };
}

export interface DownloadSettings {
  /** false with KUBEBUS_NO_DOWNLOAD=1 (offline sites): nothing is fetched */
  readonly enabled: boolean;
  readonly envtestIndexUrl: string;
  readonly natsReleasesUrl: string;
  readonly kubeReleasesUrl: string;
  /** <cache>/archives: one directory per archive, named after it */
  readonly archivesDir: string;
  /**
   * KUBEBUS_SERVER_SUMS: a file of `<sha256-or-sha512> <archive file name>`
   * lines a site vetted; when set, the only source of digests (the host's own
   * checksum lists are not read)
   */
  readonly sumsFile?: string;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');
const given = (value: string | undefined) =>
  value === undefined || value === '' ? undefined : value;

/** The cache root build.sh uses too: KUBEBUS_CACHE, else $XDG_CACHE_HOME/kubebus, else ~/.cache/kubebus. */
export function cacheRoot(env: NodeJS.ProcessEnv): string {
  return (
    given(env['KUBEBUS_CACHE']) ??
    join(given(env['XDG_CACHE_HOME']) ?? join(env['HOME'] ?? homedir(), '.cache'), 'kubebus')
  );
}

export function downloadSettings(env: NodeJS.ProcessEnv): DownloadSettings {
  const sumsFile = given(env['KUBEBUS_SERVER_SUMS']);
  return {
    enabled: env['KUBEBUS_NO_DOWNLOAD'] !== '1',
    envtestIndexUrl: given(env['KUBEBUS_ENVTEST_INDEX_URL']) ?? DEFAULT_ENVTEST_INDEX_URL,
    natsReleasesUrl: trimSlash(
      given(env['KUBEBUS_NATS_RELEASES_URL']) ?? DEFAULT_NATS_RELEASES_URL,
    ),
    kubeReleasesUrl: trimSlash(
      given(env['KUBEBUS_KUBE_RELEASES_URL']) ?? DEFAULT_KUBE_RELEASES_URL,
    ),
    archivesDir: join(cacheRoot(env), 'archives'),
    ...(sumsFile === undefined ? {} : { sumsFile }),
  };
}
