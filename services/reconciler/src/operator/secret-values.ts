// ctx.readSecret: a Secret's values, read from the apiserver (the bus never
// carries them), under a rule the operator declares in `rbac.rules`. Nothing
// here logs or records a value: only the Secret's name and its keys appear
// in errors.
import { TerminalError, type Operator, type SecretValues } from '@kubebus/shared/definition';

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
