// LIST (paginated) and WATCH (with bookmarks and an inactivity limit) of one
// resource, as plain async iteration. Decisions (what to publish, when to relist)
// belong to the caller.
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import { KubeObjectSchema, type KubeObject } from '../events/kube-object.js';
import { apiErrorFrom } from './api-error.js';
import type { KubeClient } from './client.js';
import type { KubeResponse } from './http2-connection.js';
import { collectionPath, type ResourceRef } from './refs.js';

export interface WatchScope {
  readonly resource: ResourceRef;
  /**
   * List and watch metadata only (PartialObjectMetadata): the objects' bytes —
   * a Secret's data — never reach this process. Needs the resource's kind,
   * which the answers then carry instead of PartialObjectMetadata.
   */
  readonly metadataOnly?: { readonly kind: string };
  /** watch one namespace; all when undefined */
  readonly namespace?: string;
  readonly labelSelector?: string;
}

export interface ListPage {
  readonly items: KubeObject[];
  /** the snapshot the whole list was served from */
  readonly resourceVersion: string;
}

interface RawList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
  apiVersion?: string;
  kind?: string;
}

/** Lists the scope page by page; every page carries the list's resourceVersion. */
export async function* listPages(
  client: KubeClient,
  scope: WatchScope,
  pageSize = 500,
  signal?: AbortSignal,
): AsyncGenerator<ListPage> {
  let continueToken: string | undefined;
  const { resource } = scope;
  // List items lack apiVersion and kind; give them back so events carry them.
  const apiVersion =
    resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  const metadataOnly = scope.metadataOnly;
  do {
    const list = await client.request<RawList>(collectionPath(resource, scope.namespace), {
      query: { limit: pageSize, continue: continueToken, labelSelector: scope.labelSelector },
      ...(metadataOnly === undefined ? {} : { accept: METADATA_LIST }),
      ...(signal ? { signal } : {}),
    });
    const kind = metadataOnly?.kind ?? list.kind?.replace(/List$/, '') ?? '';
    const items = (list.items ?? []).map((item) =>
      KubeObjectSchema.parse(
        metadataOnly === undefined
          ? { apiVersion, kind, ...(item as object) }
          : { ...(item as object), apiVersion, kind },
      ),
    );
    yield { items, resourceVersion: list.metadata?.resourceVersion ?? '' };
    continueToken = list.metadata?.continue || undefined;
  } while (continueToken !== undefined);
}

export type WatchEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: KubeObject }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string }
  | { readonly type: 'INVALID'; readonly reason: string; readonly raw: string };

export interface WatchOptions {
  readonly resourceVersion: string;
  /** a stream with no event and no bookmark for this long is dead */
  readonly inactivityMs: number;
  /** the apiserver closes the watch after this; the caller re-opens it */
  readonly timeoutSeconds: number;
  readonly signal?: AbortSignal;
}

const MAX_LINE_BYTES = 16 * 1024 * 1024;
const METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** One watch request, until the server ends it; 410 Gone throws KubeApiError(410). */
export async function* watchEvents(
  client: KubeClient,
  scope: WatchScope,
  options: WatchOptions,
): AsyncGenerator<WatchEvent> {
  const res = await client.openStream(collectionPath(scope.resource, scope.namespace), {
    query: {
      watch: true,
      allowWatchBookmarks: true,
      resourceVersion: options.resourceVersion,
      timeoutSeconds: options.timeoutSeconds,
      labelSelector: scope.labelSelector,
    },
    timeoutMs: options.inactivityMs,
    ...(scope.metadataOnly === undefined ? {} : { accept: METADATA }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const { resource } = scope;
  const apiVersion =
    resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  try {
    for await (const line of linesWithWatchdog(res, options.inactivityMs)) {
      const event = parseWatchLine(line);
      if (event === undefined) continue;
      // PartialObjectMetadata is told apart from the resource only by its kind: give it back
      yield scope.metadataOnly !== undefined && 'object' in event
        ? { ...event, object: { ...event.object, apiVersion, kind: scope.metadataOnly.kind } }
        : event;
    }
  } finally {
    res.destroy();
  }
}

async function* linesWithWatchdog(res: KubeResponse, inactivityMs: number): AsyncGenerator<string> {
  const watchdog = { stalled: false };
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      watchdog.stalled = true;
      res.destroy();
    }, inactivityMs);
  };
  arm();
  let buffered = '';
  try {
    for await (const chunk of res.body) {
      arm();
      buffered += chunk.toString('utf8');
      if (buffered.length > MAX_LINE_BYTES) throw new Error('watch line exceeds 16 MiB');
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== '') yield line;
        newline = buffered.indexOf('\n');
      }
    }
  } catch (error) {
    if (!watchdog.stalled) throw error;
  } finally {
    clearTimeout(timer);
  }
  if (watchdog.stalled) {
    throw new KubebusError(ErrorCodes.WatchStalled, `watch stream silent for ${inactivityMs} ms`);
  }
}

function parseWatchLine(line: string): WatchEvent | undefined {
  let raw: { type?: unknown; object?: unknown };
  try {
    raw = JSON.parse(line) as typeof raw;
  } catch {
    return { type: 'INVALID', reason: 'watch line is not JSON', raw: line.slice(0, 1_000) };
  }
  switch (raw.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const parsed = KubeObjectSchema.safeParse(raw.object);
      if (parsed.success) return { type: raw.type, object: parsed.data };
      return { type: 'INVALID', reason: parsed.error.message, raw: line.slice(0, 1_000) };
    }
    case 'BOOKMARK': {
      const rv = (raw.object as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
        ?.resourceVersion;
      return rv ? { type: 'BOOKMARK', resourceVersion: rv } : undefined;
    }
    case 'ERROR': {
      const status = raw.object as { code?: number } | undefined;
      throw apiErrorFrom(status?.code ?? 500, JSON.stringify(raw.object), {});
    }
    default:
      return {
        type: 'INVALID',
        reason: `unknown watch event type ${String(raw.type)}`,
        raw: line.slice(0, 1_000),
      };
  }
}
