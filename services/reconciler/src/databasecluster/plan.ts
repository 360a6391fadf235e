// The DatabaseCluster reconciler as the reconciler service runs it.
import type { ReconcilerPlan } from '../reconciler-service.js';
import { BackupBuckets } from './backup-bucket.js';
import { DATABASE_CLUSTERS, DatabaseClusterReconciler } from './reconciler.js';
import { KIND } from './spec.js';

export function databaseClusterPlan(streamReplicas: number): ReconcilerPlan {
  return {
    primary: { group: DATABASE_CLUSTERS.group, resource: DATABASE_CLUSTERS.resource, kind: KIND },
    build: (tools) =>
      new DatabaseClusterReconciler({
        ...tools,
        buckets: new BackupBuckets(tools.bus.nc, streamReplicas),
      }),
  };
}
