// What the generated objects are called and labelled, in one place: every
// module names a role's ServiceAccount, Deployment, NATS user and Secret key
// the same way, so they cannot drift apart.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';

/** The ServiceAccount, (Cluster)Role, Deployment and PodDisruptionBudget of a role. */
export function roleObjectName(operator: Operator, role: Role): string {
  return `kubebus-${operator.name}-${role}`;
}

/** Labels that select a role's pods: never change them once deployed (selectors are immutable). */
export function selectorLabels(operator: Operator, role: Role): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'kubebus',
    'app.kubernetes.io/instance': operator.name,
    'app.kubernetes.io/component': role,
  };
}

/** The labels of every generated object of the operator (selectors use fewer). */
export function operatorLabels(operator: Operator): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'kubebus',
    'app.kubernetes.io/instance': operator.name,
    'app.kubernetes.io/part-of': 'kubebus',
  };
}

/** The NATS user a role connects as; also its key in the NATS credentials Secret. */
export function natsUserOf(operator: Operator, role: Role): string {
  return `${operator.name}-${role}`;
}

/** The variable nats-server reads a user's password from. */
export function passwordVariableOf(user: string): string {
  return `KUBEBUS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
}

/** The NATS users every kubebus installation has besides the operators' own. */
export const SHARED_NATS_USERS = ['admin', 'cli', 'dlq-admin'] as const;
