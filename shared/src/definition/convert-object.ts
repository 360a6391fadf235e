// Converting an object of a custom resource between its versions, through
// the storage version (hub and spoke), with the definition's pure functions:
// what the conversion webhook answers the apiserver with, and how a reconciler
// reads an object recorded in another version than the one it reconciles.
import type { ObjectMeta } from './objects.js';
import type { CustomResource } from './resource.js';
import type { Converted, Convertible, ServedVersion } from './versions.js';

/** An object as sent or recorded: apiVersion, kind, metadata, spec, status, anything else. */
export interface ConvertibleObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Readonly<Record<string, unknown>> & {
    readonly name?: string | undefined;
    readonly namespace?: string | undefined;
  };
  readonly spec?: unknown;
  readonly status?: unknown;
  readonly [field: string]: unknown;
}

/** A conversion that cannot be made: an unknown version or kind, or a conversion function threw. */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
}

/**
 * The spec as its version's schema outputs it (defaults applied), as the
 * conversion functions' types promise: the apiserver may send an object its
 * defaulting has not reached (a create in another version). A spec the
 * schema refuses (refinements) is passed as it is: conversion never validates.
 */
function withDefaults(
  object: Convertible<unknown, unknown>,
  version: ServedVersion,
): Convertible<unknown, unknown> {
  const parsed = version.spec.safeParse(object.spec);
  return parsed.success ? { ...object, spec: parsed.data } : object;
}

/** The version an apiVersion names, or a ConversionError. */
export function versionNamed(resource: CustomResource, apiVersion: string): ServedVersion {
  // exactly group/version: no suffix, no other group (a forged managedFields entry passes through here)
  const version = resource.versions.find(
    (known) => `${resource.group}/${known.name}` === apiVersion,
  );
  if (version === undefined)
    throw new ConversionError(
      `${apiVersion} is not a version of ${resource.kind} (${resource.versions.map((v) => `${resource.group}/${v.name}`).join(', ')})`,
    );
  return version;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * What a conversion function answered, checked: the types promise an object
 * with a spec and string annotations, but the function is the user's code
 * (plain JavaScript, a cast) and its answer goes into the apiserver's reply.
 */
function answered(out: unknown): Converted<unknown, unknown> {
  if (out === null || typeof out !== 'object' || Array.isArray(out))
    throw new Error(`the conversion answered ${out === null ? 'null' : typeof out}, not an object`);
  const { status, annotations } = out as Record<string, unknown>;
  if (
    status !== undefined &&
    (status === null || typeof status !== 'object' || Array.isArray(status))
  )
    throw new Error('the conversion answered a status that is not an object');
  if (annotations !== undefined) {
    if (annotations === null || typeof annotations !== 'object' || Array.isArray(annotations))
      throw new Error('the conversion answered annotations that are not an object');
    for (const [key, value] of Object.entries(annotations))
      if (typeof value !== 'string' && value !== null)
        throw new Error(`the conversion answered annotation ${key} that is not a string or null`);
  }
  return out as Converted<unknown, unknown>;
}

/** Annotations with a conversion's changes made: a value set, null deleted. */
function applied(
  annotations: Readonly<Record<string, string>> | undefined,
  changes: Readonly<Record<string, string | null>> | undefined,
): Record<string, string> {
  const set = Object.entries(changes ?? {});
  return Object.fromEntries([
    ...Object.entries(annotations ?? {}).filter(
      ([key]) => !(changes !== undefined && key in changes),
    ),
    ...set.filter((entry): entry is [string, string] => entry[1] !== null),
  ]);
}

/**
 * An object of one version of the resource in another: through the storage
 * version (the hub), with the definition's functions. Metadata is kept but for
 * annotations the functions add; conditions and observedGeneration are carried.
 */
export function convertObject(
  resource: CustomResource,
  object: ConvertibleObject,
  desired: ServedVersion,
): ConvertibleObject {
  const desiredApiVersion = `${resource.group}/${desired.name}`;
  const from = versionNamed(resource, object.apiVersion);
  if (object.kind !== resource.kind)
    throw new ConversionError(`kind ${object.kind} is not ${resource.kind}`);
  if (from.name === desired.name) return object;
  const status = record(object.status);
  let current: Convertible<unknown, unknown> = {
    metadata: object.metadata as unknown as ObjectMeta,
    spec: object.spec ?? {},
    status: status,
  };
  let annotations: Record<string, string | null> = {};
  let ownStatus: unknown = object.status === undefined ? undefined : status;
  const hub = resource.versions.find((version) => version.storage) ?? desired;
  const step = (direction: 'toStorage' | 'fromStorage', spoke: ServedVersion) => {
    const conversion = spoke.conversion;
    if (conversion === undefined) throw new ConversionError(`${spoke.name} has no conversion`);
    let out;
    try {
      out = answered(
        conversion[direction](withDefaults(current, direction === 'toStorage' ? spoke : hub)),
      );
    } catch (error) {
      const name = object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`;
      throw new ConversionError(
        `converting ${resource.kind} ${name}${object.metadata.name ?? ''} ${direction === 'toStorage' ? `from ${spoke.name} to the storage version` : `from the storage version to ${spoke.name}`} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    annotations = { ...annotations, ...out.annotations };
    // the version's own fields are what the last conversion answered, nothing of the version before
    ownStatus = out.status;
    current = {
      metadata: {
        ...current.metadata,
        annotations: applied(current.metadata.annotations, out.annotations),
      },
      spec: out.spec,
      status: record(out.status),
    };
  };
  if (!from.storage) step('toStorage', from);
  if (!desired.storage) step('fromStorage', desired);
  const runtime = {
    ...(status['observedGeneration'] === undefined
      ? {}
      : { observedGeneration: status['observedGeneration'] }),
    ...(status['conditions'] === undefined ? {} : { conditions: status['conditions'] }),
  };
  const before = object.metadata['annotations'];
  const after = applied(record(before) as Record<string, string>, annotations);
  const { annotations: _annotations, ...otherMetadata } = object.metadata;
  const withAnnotations =
    Object.keys(annotations).length === 0
      ? object.metadata
      : before === undefined && Object.keys(after).length === 0
        ? otherMetadata
        : { ...object.metadata, annotations: after };
  return {
    ...object,
    apiVersion: desiredApiVersion,
    metadata: withAnnotations,
    spec: current.spec,
    // an object without a status stays without one: a conversion that passes the
    // status it was handed (an empty one) through adds nothing
    ...((ownStatus === undefined ||
      (object.status === undefined && Object.keys(record(ownStatus)).length === 0)) &&
    Object.keys(runtime).length === 0
      ? {}
      : { status: { ...record(ownStatus), ...runtime } }),
  };
}
