// The resources an operator declared (for, owns, watches), looked up by the
// apiVersion and kind of an object: what ctx.apply and ctx.get may touch.
import type { ResourceRef } from '@kubebus/shared/kube';
import {
  apiVersionOf,
  declaredResources,
  type Operator,
  type Resource,
} from '@kubebus/shared/definition';

export function refOf(resource: Resource): ResourceRef {
  return {
    group: resource.group,
    version: resource.version,
    resource: resource.plural,
    namespaced: resource.scope === 'Namespaced',
  };
}

export class KnownResources {
  readonly #byKind = new Map<string, Resource>();

  constructor(private readonly operator: Operator) {
    for (const resource of declaredResources(operator))
      this.#byKind.set(`${apiVersionOf(resource)}|${resource.kind}`, resource);
  }

  /** The declared resource of objects with this apiVersion and kind, or a one-line error. */
  of(apiVersion: string, kind: string, purpose: string): Resource {
    const found = this.#byKind.get(`${apiVersion}|${kind}`);
    if (found === undefined)
      throw new TypeError(
        `${purpose}: ${kind} (${apiVersion}) is not declared by operator "${this.operator.name}": add it to \`owns\` (or \`watches\`)`,
      );
    return found;
  }

  /** Whether `resource` is declared (reads of undeclared resources find nothing on the bus). */
  has(resource: Resource): boolean {
    return this.#byKind.has(`${apiVersionOf(resource)}|${resource.kind}`);
  }
}
