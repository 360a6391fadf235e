// A write the operator's own RBAC refused, told as what to do about it —
// where the body is at hand: a binding names the role it grants (what
// `rbac.bind` must name), a role is the one `rbac.escalate` must name. The
// apiserver's list of every rule not held (dozens of lines for a bootstrap
// role) is dropped: the condition, the Event and `kubebus status` carry the
// first line and the count.
import {
  classifyFailure,
  explainRefusal,
  FailureClasses,
  type GrantedRole,
} from '@kubebus/shared/errors';
import type { OperatorRbac } from '@kubebus/shared/definition';
import { KubeApiError, isKubeApiError, type ApplyBody } from '@kubebus/shared/kube';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/**
 * The error to throw for a failed write of `body`: an RBAC refusal explained
 * (`rbac`: what the operator declares, so a role it declares is not advised
 * to be declared), anything else as it is.
 */
export function explainedRefusal(
  error: unknown,
  body: ApplyBody,
  rbac: OperatorRbac | undefined,
): unknown {
  if (!isKubeApiError(error, 403) || classifyFailure(error) !== FailureClasses.Forbidden)
    return error;
  const granted = grantedBy(body);
  const declared =
    granted !== undefined &&
    [...(rbac?.bind ?? []), ...(rbac?.escalate ?? [])].some(
      (role) => role.kind === granted.kind && role.name === granted.name,
    );
  const explained = explainRefusal(
    error.message,
    granted === undefined ? undefined : { ...granted, declared },
  );
  if (explained === error.message) return error;
  // still the apiserver's 403 (status, reason, details): classified and handled as before
  return new KubeApiError(
    error.status,
    error.reason,
    explained,
    error.retryAfterMs,
    error.continueToken,
    error.details,
  );
}

/** The role a binding grants (its roleRef), or the role being written. */
export function grantedBy(body: ApplyBody): GrantedRole | undefined {
  if (typeof body['apiVersion'] !== 'string' || !body['apiVersion'].startsWith(`${RBAC_GROUP}/`))
    return undefined;
  switch (body['kind']) {
    case 'RoleBinding':
    case 'ClusterRoleBinding': {
      const ref = body['roleRef'] as { kind?: unknown; name?: unknown } | undefined;
      return typeof ref?.kind === 'string' && typeof ref.name === 'string'
        ? { kind: ref.kind, name: ref.name }
        : undefined;
    }
    case 'Role':
    case 'ClusterRole':
      return { kind: body['kind'], name: body.metadata.name };
    default:
      return undefined;
  }
}
