/** The samples cannot make a workload: the user's to fix (one line, exit 2). */
export class WorkloadError extends Error {
  override readonly name = 'WorkloadError';
}
