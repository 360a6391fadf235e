// The object a reconcile gets is always in the storage version of its
// resource. During an upgrade the bus may hold it as another release's
// watcher recorded it: a version this release defines is converted here, with
// the definition's own functions (no apiserver request); a version it does
// not know (a newer release's) is read again from the apiserver in this
// release's version, which the webhook converts.
import type { KubeObject } from '@kubebus/shared/events';
import { objectPath, type KubeClient } from '@kubebus/shared/kube';
import {
  apiVersionOf,
  ConversionError,
  convertObject,
  type CustomResource,
} from '@kubebus/shared/definition';
import { refOf } from './known-resources.js';

export async function inStorageVersion(
  resource: CustomResource,
  object: KubeObject,
  /** the object read again from the apiserver in the storage version */
  reread: () => Promise<KubeObject | undefined>,
): Promise<KubeObject | undefined> {
  const wanted = apiVersionOf(resource);
  if (object.apiVersion === wanted) return object;
  const [group, name] = object.apiVersion.split('/');
  const known = resource.versions.find((version) => version.name === name);
  const storage = resource.versions.find((version) => version.storage);
  if (group === resource.group && known !== undefined && storage !== undefined) {
    try {
      return convertObject(resource, object, storage) as KubeObject;
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      throw new Error(`the object recorded as ${object.apiVersion}: ${error.message}`, {
        cause: error,
      });
    }
  }
  return reread();
}

/** The apiserver read `inStorageVersion` falls back on. */
export function rereadWith(
  client: Pick<KubeClient, 'getIfExists'>,
  resource: CustomResource,
  object: KubeObject,
) {
  const { namespace, name } = object.metadata;
  return () => client.getIfExists<KubeObject>(objectPath(refOf(resource), namespace ?? '', name));
}

/**
 * The recorded objects of one resource in its storage version, the apiVersion
 * computed once: an object already in it (every object of a single-version
 * resource, nearly every one of a versioned resource) comes back as it is,
 * synchronously, with no closure, no string built and nothing awaited.
 */
export class StorageVersionReader {
  readonly apiVersion: string;

  constructor(
    private readonly resource: CustomResource,
    private readonly client: Pick<KubeClient, 'getIfExists'>,
  ) {
    this.apiVersion = apiVersionOf(resource);
  }

  /** Whether a recorded object must be converted (or read again) before use. */
  needed(object: KubeObject): boolean {
    return object.apiVersion !== this.apiVersion;
  }

  /** The object in the storage version: converted here, or read again when this release does not know its version. */
  convert(object: KubeObject): Promise<KubeObject | undefined> {
    return inStorageVersion(this.resource, object, rereadWith(this.client, this.resource, object));
  }

  /** The objects in the storage version (those gone on a re-read left out): the same array when none needs it. */
  async all(objects: readonly KubeObject[]): Promise<readonly KubeObject[]> {
    if (!objects.some((object) => this.needed(object))) return objects;
    const converted = await Promise.all(
      objects.map((object) =>
        this.needed(object) ? this.convert(object) : Promise.resolve(object),
      ),
    );
    return converted.filter((object) => object !== undefined);
  }
}
