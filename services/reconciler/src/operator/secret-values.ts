// ctx.readSecret: a Secret's values, read from the apiserver (the bus never
// carries them), under a rule the operator declares in `rbac.rules`. Nothing
// here logs or records a value: only the Secret's name and its keys appear
// in errors.
import { TerminalError, type Operator, type SecretValues } from '@kubebus/shared/definition';
import { nameProblem, namespaceProblem } from '@kubebus/shared/kube';

/**
 * Why the operator may not read Secret `name`, or undefined when a declared
 * rule grants `get` on it: refused before the apiserver is asked, with what
 * to declare, rather than a 403 that spends the object's retries.
 */
export function secretReadRefusal(operator: Operator, name: string): string | undefined {
  const grants = (operator.rbac?.rules ?? []).filter(
    (rule) =>
      rule.apiGroups.includes('') &&
      rule.resources.includes('secrets') &&
      rule.verbs.includes('get'),
  );
  if (grants.some((rule) => rule.resourceNames === undefined || rule.resourceNames.includes(name)))
    return undefined;
  if (grants.length > 0)
    return `ctx.readSecret: Secret ${name} is not among the resourceNames operator "${operator.name}" may get: add it to the rule in \`rbac.rules\``;
  return `ctx.readSecret: operator "${operator.name}" declares no rule to get Secrets: add \`rbac: { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] }\` (with resourceNames where the names are known)`;
}

/**
 * Why a Secret cannot be read where it is asked for, or undefined: a name
 * the apiserver would take for something else (an empty one lists them all),
 * a namespaced primary reaching into another namespace (one tenant's object
 * naming another's Secret), a cluster-scoped one not saying where.
 */
export function secretPlaceRefusal(
  name: string,
  namespace: string | undefined,
  ownerNamespace: string,
): string | undefined {
  const problem =
    nameProblem(name) ?? (namespace === undefined ? undefined : namespaceProblem(namespace));
  if (problem !== undefined) return `ctx.readSecret: ${problem}`;
  if (ownerNamespace === '')
    return namespace === undefined || namespace === ''
      ? `ctx.readSecret: Secret ${name} needs a namespace (the primary is cluster-scoped)`
      : undefined;
  if (namespace !== undefined && namespace !== ownerNamespace)
    return `ctx.readSecret: Secret ${name} is in namespace ${namespace}, not the object's (${ownerNamespace}): an object reads the Secrets of its own namespace only`;
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A Secret's `data` (base64), as text: a value that is not UTF-8 is named (never shown) and refused. */
export function secretValuesOf(
  data: Readonly<Record<string, string>> | undefined,
  name: string,
): SecretValues {
  const values: Record<string, string> = {};
  for (const [key, encoded] of Object.entries(data ?? {})) {
    try {
      values[key] = utf8.decode(Buffer.from(encoded, 'base64'));
    } catch {
      throw new TerminalError(
        `ctx.readSecret: key ${key} of Secret ${name} is not UTF-8 text; read binary values with your own client`,
      );
    }
  }
  return Object.freeze(values);
}
