// What the server binaries print for `--version`, matched against the pins:
// one matcher for the download check (archives.ts) and for the Go builds the
// cache already holds (binaries.ts), so `v1.37.2` never passes for `v1.37.20`.
import { accessSync, constants } from 'node:fs';
import type { PinnedVersions } from './archive-sources.js';

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `printed` names `version` (with or without its `v`) as a whole
 * version: not `v1.37.20`, `1.37.2.1`, `v1.37.2-rc.0` or `11.37.2`.
 * Undefined: any release (major.minor.patch) will do.
 */
export function namesVersion(printed: string, version: string | undefined): boolean {
  const wanted = version === undefined ? '\\d+\\.\\d+\\.\\d+' : escaped(version.replace(/^v/, ''));
  return new RegExp(`(?<![\\w.+-])v?${wanted}(?![\\w+-]|\\.\\w)`).test(printed);
}

export type PinnedBinary = 'kube-apiserver' | 'kube-controller-manager' | 'etcd' | 'nats-server';

/** The version each server must print: Kubernetes' for its two, etcd's and nats-server's own. */
export function pinOf(binary: PinnedBinary, versions: PinnedVersions): string {
  switch (binary) {
    case 'kube-apiserver':
    case 'kube-controller-manager':
      return versions.kubernetes;
    case 'etcd':
      return versions.etcd;
    case 'nats-server':
      return versions.nats;
  }
}
