// Kubernetes' naming rules for the parts of an object key, checked at every
// edge a key comes in through (the HTTP sink, work marks and status intents on
// the bus, the CLI) before it reaches a subject or an apiserver path. The
// rules are apimachinery's (pkg/util/validation): object names are DNS-1123
// subdomains, namespaces DNS-1123 labels, API groups subdomains, resources
// (plurals) labels. A key that passes also makes a bounded subject (subjects.ts
// checks the length anyway) and a URL path that no `.`/`..` segment can bend.
import { z } from 'zod';
import type { ObjectKey } from './refs.js';

export const NameLimits = {
  /** metadata.name, and an API group */
  subdomain: 253,
  /** a namespace, a resource's plural */
  label: 63,
} as const;

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDns1123Label(value: string): boolean {
  return value.length <= NameLimits.label && LABEL.test(value);
}

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= NameLimits.subdomain && SUBDOMAIN.test(value);
}

export type KeyValidation =
  { readonly ok: true; readonly key: ObjectKey } | { readonly ok: false; readonly reason: string };

const LABEL_RULE = `a lowercase RFC 1123 label (at most ${NameLimits.label} characters: a-z, 0-9 and '-', starting and ending with a letter or digit)`;
const SUBDOMAIN_RULE = `a lowercase RFC 1123 subdomain (at most ${NameLimits.subdomain} characters: a-z, 0-9, '-' and '.', each part starting and ending with a letter or digit)`;

/** A value as a reason shows it: quoted, control characters escaped, long ones cut. */
export function shown(value: string): string {
  const cut = value.length > 64 ? `${value.slice(0, 64)}…` : value;
  const quoted = JSON.stringify(cut);
  return value.length > 64 ? `${quoted} (${value.length} characters)` : quoted;
}

/** The first rule the name breaks, or undefined. */
export function nameProblem(name: string): string | undefined {
  return isDns1123Subdomain(name) ? undefined : `name ${shown(name)} is not ${SUBDOMAIN_RULE}`;
}

/** '' is the namespace of a cluster-scoped object. */
export function namespaceProblem(namespace: string): string | undefined {
  return namespace === '' || isDns1123Label(namespace)
    ? undefined
    : `namespace ${shown(namespace)} is not ${LABEL_RULE}`;
}

/** '' is the core group. */
export function groupProblem(group: string): string | undefined {
  return group === '' || isDns1123Subdomain(group)
    ? undefined
    : `API group ${shown(group)} is not ${SUBDOMAIN_RULE}`;
}

export function resourceProblem(resource: string): string | undefined {
  return isDns1123Label(resource) ? undefined : `resource ${shown(resource)} is not ${LABEL_RULE}`;
}

/** The key, or the first rule it breaks (failure as data, like zod's safeParse). */
export function validateObjectKey(key: ObjectKey): KeyValidation {
  const reason =
    groupProblem(key.group) ??
    resourceProblem(key.resource) ??
    namespaceProblem(key.namespace) ??
    nameProblem(key.name);
  return reason === undefined ? { ok: true, key } : { ok: false, reason: `invalid key: ${reason}` };
}

/** An object key off the bus: the four strings, each by Kubernetes' rules. */
export const ObjectKeySchema = z
  .object({ group: z.string(), resource: z.string(), namespace: z.string(), name: z.string() })
  .superRefine((key, ctx) => {
    const checked = validateObjectKey(key);
    if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.reason });
  });
