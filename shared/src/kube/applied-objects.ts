// Skips server-side applies that would change nothing: an apply of the same
// body to an object nobody changed since this process applied it is a no-op
// for the apiserver, but still a write it must process (the second reconcile
// that an owned object's own creation triggers sends three of them per
// object). The object as last recorded (the bus) proves nobody changed it:
// same uid, and the same generation — or, for kinds without one, the same
// resourceVersion — as the apiserver answered to this process' apply.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../events/kube-object.js';
import { apply, type ApplyBody, type ApplyOptions } from './apply.js';
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

  constructor(private readonly capacity = 50_000) {}

  /**
   * Applies `body` unless `recorded` (the object as last seen) shows it is
   * already in place from this process' own apply of the same body. Answers
   * what the apiserver answered, or `recorded` when the apply was skipped.
   */
  async apply(
    client: KubeClient,
    resource: ResourceRef,
    body: ApplyBody,
    options: ApplyOptions,
    recorded: KubeObject | undefined,
  ): Promise<{ readonly outcome: 'applied' | 'unchanged'; readonly object: KubeObject }> {
    const id = `${resource.group}/${resource.resource}/${body.metadata.namespace ?? ''}/${body.metadata.name}`;
    const digest = createHash('sha256')
      .update(options.fieldManager)
      .update(JSON.stringify(body))
      .digest('base64');
    const last = this.#applied.get(id);
    if (
      last !== undefined &&
      recorded !== undefined &&
      last.digest === digest &&
      last.uid === recorded.metadata.uid &&
      last.version === versionOf(recorded)
    ) {
      return { outcome: 'unchanged', object: recorded };
    }
    const answer = await apply(client, resource, body, options);
    this.#applied.delete(id); // re-insert: the map's order is the LRU order
    this.#applied.set(id, { digest, uid: answer.metadata.uid, version: versionOf(answer) });
    if (this.#applied.size > this.capacity) {
      const oldest = this.#applied.keys().next().value;
      if (oldest !== undefined) this.#applied.delete(oldest);
    }
    return { outcome: 'applied', object: answer };
  }
}
