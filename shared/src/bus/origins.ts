// Who parked a dead letter or recorded an outcome: the `origin` of a letter
// (and the first token of its subject, kubebus.dlq.<origin>.…) and the
// `controller` of an outcome (kubebus.outcomes.<controller>.…). Each carries
// the operator's name, so NATS keeps each operator's users to their own
// letters and outcomes: a reconciler's is the operator's name, its status
// writer's `<operator>.status-writer`, its watcher's `<operator>.watcher`.
// Operator names are DNS labels (no '.'), so none can be taken by another
// operator; in a subject the '.' is encoded (`<operator>_status-writer`), one
// token no other operator's permission covers.
import { encodeToken } from './subject-token.js';

export const ROLE_ORIGINS = { statusWriter: 'status-writer', watcher: 'watcher' } as const;
export type RoleOrigin = (typeof ROLE_ORIGINS)[keyof typeof ROLE_ORIGINS];

export const origins = {
  /** a reconciler's letters and outcomes: the operator's name */
  reconciler: (operator: string) => operator,
  statusWriter: (operator: string) => `${operator}.${ROLE_ORIGINS.statusWriter}`,
  watcher: (operator: string) => `${operator}.${ROLE_ORIGINS.watcher}`,
} as const;

/** The subject token of an origin (a permission: `kubebus.dlq.<token>.>`). */
export function originToken(origin: string): string {
  return encodeToken(origin);
}

/**
 * The role and operator an origin names. The layout before (ADR 0015) had
 * the bare role (`status-writer`, `watcher`), shared by every operator: its
 * operator is undefined.
 */
export function originOf(origin: string): {
  readonly role: RoleOrigin | 'reconciler';
  readonly operator: string | undefined;
} {
  for (const role of Object.values(ROLE_ORIGINS)) {
    if (origin === role) return { role, operator: undefined };
    if (origin.endsWith(`.${role}`)) return { role, operator: origin.slice(0, -role.length - 1) };
  }
  return { role: 'reconciler', operator: origin };
}
