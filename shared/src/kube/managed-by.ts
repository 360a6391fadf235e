// The label kubebus sets on every object an operator applies or creates, and
// the selector its watcher watches owned kinds with: a watcher publishes the
// objects kubebus manages, never every ConfigMap or Secret of the cluster.
// Kubernetes' recommended label, with the value its own tools use for
// themselves (Helm writes `Helm`, kubebus writes `kubebus`).
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'kubebus';

/** The label selector of an owned kind's watch, with the operator's own selector if any. */
export function managedSelector(extra: string | undefined): string {
  const own = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  return extra === undefined || extra.trim() === '' ? own : `${own},${extra}`;
}
