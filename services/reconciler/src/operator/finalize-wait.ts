// A finalize that is not done yet (a child still terminating) says so with
// `{ requeueAfterMs }`: the finalizer stays and finalize runs again after the
// delay, as reconcile's requeue does (ADR 0034), not as a failure, so waiting
// on something slow never spends the retry budget nor dead-letters the object.
import type { KubeObject } from '@kubebus/shared/events';
import { z } from 'zod';
import { describeIssues, notReadyStatus, type Status } from './status.js';

/**
 * The shortest wait: a finalize that asks for less must not spin, and a wait
 * of a second or more waits outside the object's partition (ADR 0034).
 */
export const MIN_FINALIZE_WAIT_MS = 1_000;

export const FINALIZING = 'Finalizing';

/**
 * How long the finalize asked to wait, or undefined when it is done. As for
 * reconcile's requeueAfterMs, only a positive number waits (0 is "no wait":
 * `pending ? 2_000 : 0` reads the same in both), and no wait is under 1 s.
 */
export function finalizeWait(result: unknown): number | undefined {
  if (typeof result !== 'object' || result === null || !('requeueAfterMs' in result))
    return undefined;
  const asked = result.requeueAfterMs;
  if (typeof asked !== 'number' || !(asked > 0)) return undefined;
  return Number.isFinite(asked) ? Math.max(asked, MIN_FINALIZE_WAIT_MS) : MIN_FINALIZE_WAIT_MS;
}

/** What a waiting finalize shows besides Ready=False, as it returned it (not yet checked by the schema). */
export interface FinalizeReport {
  readonly message?: string;
  readonly status?: Record<string, unknown>;
}

/** The message and status fields a finalize that waits returned, where they have that shape. */
export function finalizeReport(result: unknown): FinalizeReport {
  if (typeof result !== 'object' || result === null) return {};
  const { message, status } = result as { message?: unknown; status?: unknown };
  return {
    ...(typeof message === 'string' && message.trim() !== '' ? { message } : {}),
    ...(typeof status === 'object' && status !== null && !Array.isArray(status)
      ? { status: status as Record<string, unknown> }
      : {}),
  };
}

/**
 * The status of an object whose finalize waits: Ready=False, reason
 * Finalizing, with what it waits for, the fields it returned over the rest
 * as it is. The default message names no delay, so a finalize asked again
 * writes nothing new (and starts no round of its own); a message or field
 * that changes does, once per change.
 */
export function finalizingStatus(
  object: KubeObject,
  finalizer: string,
  report: FinalizeReport = {},
  now = new Date(),
): Status {
  const { conditions, ...rest } = notReadyStatus(
    object,
    FINALIZING,
    report.message ??
      `finalize is not done: it runs again later, and the finalizer ${finalizer} stays until it is`,
    now,
  );
  const { conditions: _c, observedGeneration: _g, ...fields } = report.status ?? {};
  return { ...rest, ...fields, conditions };
}

/**
 * The fields a waiting finalize returned, each by its own rule in the status
 * schema, and only those (the status the object has may lack what the schema
 * requires: deleted before its first reconcile; a field's default must not
 * overwrite one it did not return). Refused fields are left out and said,
 * never a failure: the wait stays the outcome.
 */
export function checkedFinalizeFields(
  schema: z.ZodType,
  fields: Record<string, unknown>,
): { readonly fields: Record<string, unknown>; readonly refused?: string } {
  const shape: Record<string, z.ZodType | undefined> =
    schema instanceof z.ZodObject ? schema.shape : {};
  const kept: Record<string, unknown> = {};
  const refused: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const rule = shape[name];
    if (rule === undefined) {
      refused.push(`status.${name}: not a field of the status schema`);
      continue;
    }
    try {
      const checked = rule.safeParse(value);
      if (checked.success) kept[name] = checked.data;
      else refused.push(describeIssues(checked.error.issues, `status.${name}`));
    } catch (error) {
      refused.push(`status.${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return refused.length === 0 ? { fields: kept } : { fields: kept, refused: refused.join('; ') };
}
