// Metrics made once per registry: roles that share a process (kubebus run,
// all roles in one) share one registry, and prom-client refuses a second
// metric of the same name. Series stay apart by their labels (controller, …).
import type { Registry } from 'prom-client';

export function perRegistry<T>(make: (registry: Registry) => T): (registry: Registry) => T {
  const made = new WeakMap<Registry, T>();
  return (registry) => {
    let metrics = made.get(registry);
    if (metrics === undefined) {
      metrics = make(registry);
      made.set(registry, metrics);
    }
    return metrics;
  };
}
