// Skips server-side applies that would change nothing: an apply of the same
// body to an object nobody changed since this process applied it is a no-op
// for the apiserver, but still a write it must process (the second reconcile
// that an owned object's own creation triggers sends three of them per
// object). The object as last recorded (the bus) proves nobody changed it:
// same uid, and the same generation — or, for kinds without one, the same
// resourceVersion — as the apiserver answered to this process' apply. The
// record is asked for only when this process applied the same body before:
// an apply it cannot skip goes out at once, without waiting on the bus (the
// first reconcile of every object, each of its writes one read sooner). A
// create-once object is created likewise: read first only once this process
// knows of it, so a later reconcile sends no create for what is recorded.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../events/kube-object.js';
import { apply, createIfAbsent, type ApplyBody, type ApplyOptions } from './apply.js';
import type { KubeClient } from './client.js';
import type { ResourceRef } from './refs.js';

interface Applied {
  readonly digest: string;
  readonly uid: string;
  /** generation when the kind has one, else resourceVersion */
  readonly version: string;
}

function versionOf(object: KubeObject): string {
  const generation = object.metadata.generation;
  return generation === undefined ? `rv:${object.metadata.resourceVersion}` : `g:${generation}`;
}

export class AppliedObjects {
  readonly #applied = new Map<string, Applied>();
  /** created once by this process, or found existing when it tried */
  readonly #created = new Map<string, true>();

  constructor(private readonly capacity = 50_000) {}

  /**
   * Applies `body` unless the object as last recorded (`recorded`, read only
   * when this process applied the same body before) shows it is still in
   * place from that apply. `fence` is asked right before the apply is sent.
   * Answers what the apiserver answered, or the record when the apply was
   * skipped.
   */
  async apply(
    client: KubeClient,
    resource: ResourceRef,
    body: ApplyBody,
    options: ApplyOptions,
    { recorded, fence }: { recorded: () => Promise<KubeObject | undefined>; fence: () => void },
  ): Promise<{ readonly outcome: 'applied' | 'unchanged'; readonly object: KubeObject }> {
    const id = idOf(resource, body);
    const digest = createHash('sha256')
      .update(options.fieldManager)
      .update(JSON.stringify(body))
      .digest('base64');
    const last = this.#applied.get(id);
    if (last !== undefined && last.digest === digest) {
      const current = await recorded();
      if (
        current !== undefined &&
        last.uid === current.metadata.uid &&
        last.version === versionOf(current)
      )
        return { outcome: 'unchanged', object: current };
    }
    fence();
    const answer = await apply(client, resource, body, options);
    this.#remember(this.#applied, id, {
      digest,
      uid: answer.metadata.uid,
      version: versionOf(answer),
    });
    return { outcome: 'applied', object: answer };
  }

  /**
   * Creates `body` unless it exists. The record is read first only when this
   * process created or found the object before (or `readFirst`): then a
   * record proves it is there without a request. An object this process
   * knows nothing of is created at once, its existence answered by the
   * apiserver (409) instead of a read the create would wait on.
   */
  async createOnce(
    client: KubeClient,
    resource: ResourceRef,
    body: ApplyBody,
    fieldManager: string,
    options: {
      recorded: () => Promise<KubeObject | undefined>;
      fence: () => void;
      signal?: AbortSignal;
      readFirst?: boolean;
    },
  ): Promise<'created' | 'exists'> {
    const id = idOf(resource, body);
    if (options.readFirst === true || this.#created.has(id)) {
      if ((await options.recorded()) !== undefined) return 'exists';
    }
    options.fence();
    const outcome = await createIfAbsent(client, resource, body, fieldManager, options.signal);
    this.#remember(this.#created, id, true);
    return outcome;
  }

  #remember<T>(map: Map<string, T>, id: string, value: T): void {
    map.delete(id); // re-insert: the map's order is the LRU order
    map.set(id, value);
    if (map.size > this.capacity) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
  }
}

function idOf(resource: ResourceRef, body: ApplyBody): string {
  return `${resource.group}/${resource.resource}/${body.metadata.namespace ?? ''}/${body.metadata.name}`;
}
