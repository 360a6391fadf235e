// The two upstream checksum lists, parsed: controller-tools' envtest index
// (what setup-envtest reads: releases → archive name → sha512 and selfLink) and
// the SHA256SUMS file goreleaser writes beside each nats-server release.
import { parse } from 'yaml';
import { ArchiveError } from './archive-error.js';
import type { Platform } from './archive-sources.js';

export interface ListedArchive {
  readonly name: string;
  readonly url: string;
  readonly algorithm: 'sha256' | 'sha512';
  /** lower-case hex */
  readonly digest: string;
}

export const envtestArchiveName = (version: string, platform: Platform) =>
  `envtest-${version}-${platform.os}-${platform.arch}.tar.gz`;

export const natsArchiveName = (version: string, platform: Platform) =>
  `nats-server-${version}-${platform.os}-${platform.arch}.tar.gz`;

const HEX = { sha256: /^[0-9a-f]{64}$/, sha512: /^[0-9a-f]{128}$/ } as const;

/** Only https, or plain http to this machine (a test server, a local mirror). */
export function safeUrl(url: string, base?: string): URL | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, base);
  } catch {
    return undefined;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && loopback)
    ? parsed
    : undefined;
}

/** `url` if safeUrl() takes it; else a refusal naming the variable that set it. */
export function checkedUrl(url: string, variable: string): string {
  if (safeUrl(url) === undefined)
    throw new ArchiveError(
      'refused',
      `${variable}=${url} is not an https URL (plain http only on loopback): fix it, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
  return url;
}

/** The envtest archive for `version` on `platform`, as the index at `indexUrl` lists it. */
export function findEnvtestArchive(
  indexText: string,
  indexUrl: string,
  version: string,
  platform: Platform,
): ListedArchive {
  const name = envtestArchiveName(version, platform);
  let index: unknown;
  try {
    index = parse(indexText);
  } catch {
    index = undefined;
  }
  const releases = (index as { releases?: unknown } | undefined)?.releases;
  if (typeof releases !== 'object' || releases === null)
    throw new ArchiveError(
      'refused',
      `${indexUrl} is not an envtest index (no releases: map): point KUBEBUS_ENVTEST_INDEX_URL at one, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
  // setup-envtest matches the archive's name, under whichever release lists it
  for (const release of Object.values(releases as Record<string, unknown>)) {
    const entry = (release as Record<string, unknown> | null)?.[name] as
      { hash?: unknown; selfLink?: unknown } | undefined;
    if (entry === undefined) continue;
    const digest = typeof entry.hash === 'string' ? entry.hash.toLowerCase() : '';
    const url = typeof entry.selfLink === 'string' ? safeUrl(entry.selfLink, indexUrl) : undefined;
    if (!HEX.sha512.test(digest) || url === undefined)
      throw new ArchiveError(
        'refused',
        `${indexUrl} lists ${name} without a sha512 hash or an https selfLink: fix the index, or set KUBEBUS_NO_DOWNLOAD=1`,
      );
    return { name, url: url.href, algorithm: 'sha512', digest };
  }
  throw new ArchiveError(
    'unavailable',
    `${indexUrl} lists no ${name} (the Kubernetes version the test bed pins)`,
  );
}

/** `<hex>  <file>` lines (sha256sum's format, a `*` before binary-mode names) → file → hex. */
export function parseChecksums(text: string): ReadonlyMap<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([0-9a-fA-F]{64}|[0-9a-fA-F]{128})\s+\*?(\S+)\s*$/.exec(line.trim());
    if (match?.[1] !== undefined && match[2] !== undefined)
      sums.set(match[2], match[1].toLowerCase());
  }
  return sums;
}

/** The nats-server archive as the release's SHA256SUMS at `sumsUrl` lists it. */
export function findNatsArchive(
  sumsText: string,
  sumsUrl: string,
  version: string,
  platform: Platform,
): ListedArchive {
  const name = natsArchiveName(version, platform);
  const digest = parseChecksums(sumsText).get(name);
  if (digest === undefined || !HEX.sha256.test(digest))
    throw new ArchiveError('unavailable', `${sumsUrl} lists no sha256 for ${name}`);
  const url = safeUrl(name, sumsUrl);
  if (url === undefined) throw new ArchiveError('refused', `${sumsUrl} is not an https URL`);
  return { name, url: url.href, algorithm: 'sha256', digest };
}

/** dl.k8s.io publishes `<binary>.sha256` beside each binary: its first word is the hex digest. */
export function parseDigestFile(text: string, algorithm: 'sha256' | 'sha512'): string | undefined {
  const digest = text.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return HEX[algorithm].test(digest) ? digest : undefined;
}
