// The status the runtime publishes for a custom resource: what the reconcile
// returned (or the status as it is), with Ready, Degraded and the reconcile's
// own conditions set at the object's generation.
import type { KubeObject } from '@kubebus/shared/events';
import {
  conditionMessage,
  setCondition,
  type Condition,
  type ConditionStatus,
} from '@kubebus/shared/kube';
import type { ConditionReport, InvalidSpecReport } from '@kubebus/shared/definition';

export type Status = Record<string, unknown>;

/** One line per zod issue, naming the field. */
export function describeIssues(
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
  root: string,
): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return `${path === '' ? root : `${root}.${path}`}: ${issue.message}`;
    })
    .join('; ');
}

function currentStatus(object: KubeObject): Status {
  const status = object['status'];
  return typeof status === 'object' && status !== null ? (status as Status) : {};
}

function conditionsOf(status: Status): Condition[] {
  return Array.isArray(status['conditions']) ? (status['conditions'] as Condition[]) : [];
}

function statusOf(value: ConditionReport['status']): ConditionStatus {
  if (value === true) return 'True';
  if (value === false) return 'False';
  return value;
}

/** `reports` set on the object's conditions, each at the object's generation. */
export function withConditions(
  object: KubeObject,
  reports: readonly ConditionReport[],
  now = new Date(),
): Condition[] {
  const observedGeneration = object.metadata.generation ?? 0;
  return reports.reduce<Condition[]>(
    (conditions, report) =>
      setCondition(
        conditions,
        {
          type: report.type,
          status: statusOf(report.status),
          reason: report.reason,
          message: report.message ?? '',
          observedGeneration,
        },
        now,
      ),
    conditionsOf(currentStatus(object)),
  );
}

/** The status after a successful reconcile. */
export function reconciledStatus(
  object: KubeObject,
  own: Status | undefined,
  ready: Omit<ConditionReport, 'type'> | undefined,
  conditions: readonly ConditionReport[],
  now = new Date(),
): Status {
  const { conditions: _old, observedGeneration: _gen, ...unchanged } = currentStatus(object);
  return {
    ...(own ?? unchanged),
    conditions: withConditions(
      object,
      [
        ...conditions,
        { type: 'Ready', ...(ready ?? { status: true, reason: 'Reconciled', message: '' }) },
        { type: 'Degraded', status: false, reason: 'AsExpected', message: '' },
      ],
      now,
    ),
  };
}

export const INVALID_SPEC = 'InvalidSpec';

/** The status of an object whose spec fails its schema (with what the operator adds). */
export function invalidSpecStatus(
  object: KubeObject,
  message: string,
  report: InvalidSpecReport<Status> | undefined,
  now = new Date(),
): Status {
  const { conditions: _old, observedGeneration: _gen, ...unchanged } = currentStatus(object);
  return {
    ...unchanged,
    ...report?.status,
    conditions: withConditions(
      object,
      [
        ...(report?.conditions ?? []),
        { type: 'Ready', status: false, reason: INVALID_SPEC, message },
      ],
      now,
    ),
  };
}

/** The status already reports this generation's spec as invalid: no second Event. */
export function alreadyInvalid(object: KubeObject): boolean {
  return readyAtGeneration(object)?.reason === INVALID_SPEC;
}

/** The Ready condition, when it was set at the object's current generation. */
function readyAtGeneration(object: KubeObject): Condition | undefined {
  const ready = conditionsOf(currentStatus(object)).find((c) => c.type === 'Ready');
  return ready?.observedGeneration === (object.metadata.generation ?? 0) ? ready : undefined;
}

export const TERMINAL = 'TerminalError';

/**
 * The status of an object whose reconcile threw a TerminalError: Ready=False
 * with its message, the rest as it is (the reconcile returned nothing).
 */
export function terminalStatus(object: KubeObject, message: string, now = new Date()): Status {
  return notReadyStatus(object, TERMINAL, message, now);
}

/** The status already reports this terminal failure at this generation: no second Event. */
export function alreadyTerminal(object: KubeObject, message: string): boolean {
  return alreadyNotReady(object, TERMINAL, message);
}

/**
 * Stopped by a TerminalError at its current generation, and not being
 * deleted: a change of the object itself that leaves the spec alone (its own
 * status write) does not run it again; a change of what it owns or watches,
 * the resync or a new version does, as controller-runtime's events do.
 */
export function stoppedByTerminal(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp === undefined && notReadyAt(object, TERMINAL);
}

/** The operator's own RBAC refused a request: retried until an admin applies it. */
export const FORBIDDEN = 'Forbidden';

/** ctx.apply refused another owner's child, or a cluster-scoped object another made (ownership.ts). */
export const ALREADY_OWNED = 'AlreadyOwned';

/** An outside system the operator's code calls is unreachable (failure-class.ts `external`). */
export const UNREACHABLE = 'Unreachable';

export function unreachableStatus(object: KubeObject, message: string, now = new Date()): Status {
  return notReadyStatus(object, UNREACHABLE, message, now);
}

/** The status already says this outage at this generation: not written again. */
export function alreadyUnreachable(object: KubeObject, message: string): boolean {
  return alreadyNotReady(object, UNREACHABLE, message);
}

/** Ready=False with the reason and message, the rest of the status as it is. */
export function notReadyStatus(
  object: KubeObject,
  reason: string,
  message: string,
  now = new Date(),
): Status {
  const { conditions: _old, observedGeneration: _gen, ...unchanged } = currentStatus(object);
  return {
    ...unchanged,
    conditions: withConditions(object, [{ type: 'Ready', status: false, reason, message }], now),
  };
}

/** The status already says Ready=False for this reason at this generation, whatever its message. */
export function notReadyAt(object: KubeObject, reason: string): boolean {
  const ready = readyAtGeneration(object);
  return ready?.status === 'False' && ready.reason === reason;
}

/** The status already says this Ready=False reason and message at this generation: not written again. */
export function alreadyNotReady(object: KubeObject, reason: string, message: string): boolean {
  const ready = readyAtGeneration(object);
  // the message as setCondition stored it (redacted, escaped, cut)
  return ready?.reason === reason && ready.message === conditionMessage(message);
}
