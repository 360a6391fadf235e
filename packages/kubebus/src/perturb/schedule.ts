// A perturbation schedule: what to do to the operator, and where in the
// workload, printed as a short string so a failure replays exactly
// (`kubebus test <op> --replay intermediate:s2:k3`).
//
//   intermediate:s<step>:k<k>   during workload step <step>, the first reconcile
//                               of the object is stopped right after its k-th
//                               write (once the bus has recorded it), the
//                               operator's roles are stopped and started again,
//                               and the work is redelivered
//   unobserved:s<from>-s<to>    steps <from>..<to> are applied while the operator
//                               is stopped: it only ever sees their end (latest
//                               wins), a delete-and-recreate included
//   stale:s<step>:<Kind>/<name> before workload step <step>, the bus' record of
//                               the owned object goes back to what it was
//                               before step <step>-1 (time travel: the
//                               revisions since are taken out of KUBEBUS_EVENTS),
//                               so the step's reconciles read an older revision
//                               until the object changes again
//   status-restart:s<step>      during workload step <step>, the status writer
//                               takes the object's first intent of the step and
//                               crashes before writing it (nothing acked); it is
//                               down for the quiet window while the reconciler
//                               runs on, then started again and handed the intent
//   handover:s<step>:k<k>       during workload step <step>, the first reconcile
//                               of the object pauses right after its k-th write;
//                               its work partition is taken from it and handed to
//                               a second instance of the operator, which
//                               reconciles the object; then the paused reconcile
//                               is released to finish (a zombie)
//   lagging:s<step>             during workload step <step>, the watcher's
//                               feed is held from the start of the step's
//                               first reconcile: the bus stays behind the
//                               apiserver (the primary and what it owns)
//                               while the reconciler runs on — it is
//                               requeued once and reads the older records —
//                               then the feed is released
//   overlap:s<step>:k<k>        during workload step <step>, the first reconcile
//                               of the object pauses right after its k-th
//                               write; step <step>+1 (the next change, or
//                               the delete) is applied and reaches the bus;
//                               then the reconcile is released to finish on
//                               the spec it saw, its status now stale
//   lagging:s<step>:primary     the same, and while the feed is held the bus'
//                               record of the primary goes back to before the
//                               step (time travel of the primary itself): the
//                               requeue reads the older spec
export type Schedule =
  | { readonly kind: 'intermediate'; readonly step: number; readonly k: number }
  | { readonly kind: 'unobserved'; readonly from: number; readonly to: number }
  | { readonly kind: 'stale'; readonly step: number; readonly target: string }
  | { readonly kind: 'status-restart'; readonly step: number }
  | { readonly kind: 'handover'; readonly step: number; readonly k: number }
  | { readonly kind: 'overlap'; readonly step: number; readonly k: number }
  | { readonly kind: 'lagging'; readonly step: number; readonly primary: boolean };

export type ScheduleKind = Schedule['kind'];
export const SCHEDULE_KINDS: readonly ScheduleKind[] = [
  'intermediate',
  'unobserved',
  'stale',
  'status-restart',
  'handover',
  'lagging',
  'overlap',
];

export function formatSchedule(schedule: Schedule): string {
  switch (schedule.kind) {
    case 'intermediate':
      return `intermediate:s${schedule.step}:k${schedule.k}`;
    case 'unobserved':
      return `unobserved:s${schedule.from}-s${schedule.to}`;
    case 'stale':
      return `stale:s${schedule.step}:${schedule.target}`;
    case 'status-restart':
      return `status-restart:s${schedule.step}`;
    case 'handover':
      return `handover:s${schedule.step}:k${schedule.k}`;
    case 'overlap':
      return `overlap:s${schedule.step}:k${schedule.k}`;
    case 'lagging':
      return `lagging:s${schedule.step}${schedule.primary ? ':primary' : ''}`;
  }
}

const INTERMEDIATE = /^(intermediate|handover|overlap):s(\d+):k(\d+)$/;
const UNOBSERVED = /^unobserved:s(\d+)-s(\d+)$/;
const STATUS_RESTART = /^status-restart:s(\d+)$/;
/** a kind and an object name as Kubernetes spells them */
const LAGGING = /^lagging:s(\d+)(:primary)?$/;
const STALE = /^stale:s(\d+):([A-Za-z][A-Za-z0-9]*\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

/** The schedule a string names, or a one-line reason it names none. */
export function parseSchedule(text: string): Schedule | { readonly error: string } {
  const trimmed = text.trim();
  const intermediate = INTERMEDIATE.exec(trimmed);
  if (intermediate !== null) {
    const k = Number(intermediate[3]);
    if (k < 1) return { error: `"${text}": k counts writes from 1` };
    const kind = intermediate[1] as 'intermediate' | 'handover' | 'overlap';
    return { kind, step: Number(intermediate[2]), k };
  }
  const unobserved = UNOBSERVED.exec(trimmed);
  if (unobserved !== null) {
    const from = Number(unobserved[1]);
    const to = Number(unobserved[2]);
    if (to < from) return { error: `"${text}": the last step comes before the first` };
    return { kind: 'unobserved', from, to };
  }
  const stale = STALE.exec(trimmed);
  if (stale !== null) {
    const step = Number(stale[1]);
    if (step < 1) return { error: `"${text}": a stale step needs one before it to travel back to` };
    return { kind: 'stale', step, target: stale[2] as string };
  }
  const statusRestart = STATUS_RESTART.exec(trimmed);
  if (statusRestart !== null) return { kind: 'status-restart', step: Number(statusRestart[1]) };
  const lagging = LAGGING.exec(trimmed);
  if (lagging !== null) {
    const step = Number(lagging[1]);
    const primary = lagging[2] !== undefined;
    if (primary && step < 1)
      return { error: `"${text}": the primary needs a step before it to travel back to` };
    return { kind: 'lagging', step, primary };
  }
  return {
    error: `"${text}" is not a schedule; they look like intermediate:s1:k2, unobserved:s0-s1, stale:s1:ConfigMap/name, status-restart:s1, handover:s1:k2, lagging:s1 or overlap:s1:k2 (the report prints them)`,
  };
}
