// What the CRD lets a tenant store that the operator may not have meant to:
// a spec string with no maximum length holds up to the apiserver's limit
// (about 1.5 MiB), which the reconciler reads and validates at every round of
// the object, and which every revision kept on the bus carries. `.max()` on
// the zod string puts maxLength in the CRD: the apiserver refuses it at
// admission instead.
import type { CustomResource } from '@kubebus/shared/definition';
import { crdOf } from '../api/crd.js';

interface SchemaNode {
  readonly type?: string;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
}

/**
 * Whether a pattern bounds the length by itself: anchored at both ends, with
 * no repetition that has no upper bound (`+`, `*`, `{n,}`). `^[a-z]{1,20}$`
 * does; `^[a-z]+$` does not.
 */
function boundedPattern(pattern: string | undefined): boolean {
  if (pattern === undefined || !pattern.startsWith('^') || !pattern.endsWith('$')) return false;
  // an escaped character is one character, whatever it is
  const unescaped = pattern.replace(/\\./g, 'x');
  return !/[+*]|\{\d+,\}/.test(unescaped);
}

/** The paths of the spec's strings without a maximum length, in the storage version. */
export function unboundedSpecStrings(resource: CustomResource): string[] {
  const crd = crdOf(resource) as {
    spec: { versions: { storage: boolean; schema?: { openAPIV3Schema?: SchemaNode } }[] };
  };
  const stored = crd.spec.versions.find((version) => version.storage);
  const spec = stored?.schema?.openAPIV3Schema?.properties?.['spec'];
  const found: string[] = [];
  const walk = (node: SchemaNode | undefined, path: string) => {
    if (node === undefined) return;
    if (
      node.type === 'string' &&
      node.maxLength === undefined &&
      node.enum === undefined &&
      node.format === undefined &&
      !boundedPattern(node.pattern)
    )
      found.push(path);
    for (const [name, child] of Object.entries(node.properties ?? {}))
      walk(child, `${path}.${name}`);
    if (node.items !== undefined) walk(node.items, `${path}[]`);
    if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`);
  };
  walk(spec, 'spec');
  return found;
}

/** One line when the spec has strings without a maximum length; none when every one is bounded. */
export function schemaWarnings(resource: CustomResource): string[] {
  const unbounded = unboundedSpecStrings(resource);
  if (unbounded.length === 0) return [];
  const shown = unbounded.slice(0, 5).join(', ');
  const more = unbounded.length > 5 ? ` and ${String(unbounded.length - 5)} more` : '';
  return [
    `${resource.kind}'s ${shown}${more} ${unbounded.length === 1 ? 'has' : 'have'} no maximum length: whoever may create a ${resource.kind} can store up to the apiserver's 1.5 MiB there, read and validated at every reconcile of it and kept in each revision on the bus. Bound ${unbounded.length === 1 ? 'it' : 'them'} with .max() on the zod string (the CRD's maxLength: refused at admission)`,
  ];
}
