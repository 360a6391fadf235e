// A run whose every schedule of a kind came back unreached perturbed nothing
// of that kind (the crash point, the pause or the held feed never came): it
// tested nothing there, so it does not pass. A kind some of whose schedules
// were reached is fine — an operator makes fewer writes on some steps.
/** The kinds every one of whose schedules tried came back unreached, in the order first tried. */
export function kindsNeverReached(
  schedules: readonly { readonly schedule: string; readonly outcome: string }[],
): string[] {
  const reached = new Map<string, boolean>();
  for (const { schedule, outcome } of schedules) {
    const kind = schedule.split(':')[0] ?? schedule;
    reached.set(kind, (reached.get(kind) ?? false) || outcome !== 'unreached');
  }
  return [...reached].filter(([, any]) => !any).map(([kind]) => kind);
}
