// KUBEBUS_WATCH_NAMESPACES: the namespaces an operator restricted to some
// (`kubebus generate --watch-namespaces`) works in. The watcher watches only
// those; the reconciler's upgrade sweep lists only those, where its Roles
// let it (a cluster-wide list is refused there).
import { z } from 'zod';

/** comma-separated namespace names; empty: every namespace */
export function watchNamespacesEnv() {
  return z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((ns) => ns.trim())
        .filter((ns) => ns !== ''),
    )
    .pipe(
      z.array(
        z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'namespace names are DNS labels'),
      ),
    );
}
