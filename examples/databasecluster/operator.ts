// The DatabaseCluster operator on kubebus' public API: a replicated
// PostgreSQL or MySQL cluster — a headless Service, a ConfigMap, a
// StatefulSet and generated credentials (a Secret created once), plus an
// external resource the runtime cannot garbage-collect: a NATS object-store
// bucket for its backups, created on first reconcile and removed by the
// finalizer.
import { defineOperator, defineResource, kinds, type ResourceObject } from 'kubebus';
import { z } from 'zod';
import { BackupBuckets } from './backup-bucket.js';
import {
  announcedCredentials,
  awaitsAnnouncement,
  desiredConfigMap,
  desiredService,
  desiredStatefulSet,
  endpoint,
  names,
  newCredentials,
} from './owned.js';
import {
  DatabaseClusterSpecSchema,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  type DatabaseClusterSpec,
} from './spec.js';

/** The Service and StatefulSet take the cluster's name: a DNS-1035 label, with room for
 *  the StatefulSet's controller-revision-hash label (name + '-' + 10 characters). */
const DNS_1035 = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
const MAX_NAME = 52;

const PHASES = ['Pending', 'Provisioning', 'Ready', 'Failed', 'Deleting'] as const;
type Phase = (typeof PHASES)[number];
const FAILED: Phase = 'Failed';

export const DatabaseCluster = defineResource({
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: PLURAL,
  scope: 'Namespaced',
  description: 'A replicated PostgreSQL or MySQL cluster, run by the kubebus example operator',
  spec: DatabaseClusterSpecSchema,
  status: z
    .object({
      phase: z.enum(PHASES),
      readyReplicas: z.int().min(0),
      endpoint: z.string(),
    })
    .partial(),
  shortNames: ['dbc'],
  printerColumns: [
    { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Running', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ],
  // refused at admission: a name that can never work is never accepted
  validations: [
    {
      rule: `self.metadata.name.matches('${DNS_1035}') && size(self.metadata.name) <= ${MAX_NAME}`,
      message: `the name must be at most ${MAX_NAME} lower-case letters, digits and '-', start with a letter and end with a letter or digit (no dots): it names the cluster's Service and StatefulSet`,
      reason: 'FieldValueInvalid',
    },
  ],
});

/** What the cluster shows, from the ready replicas its StatefulSet reports. */
export function observed(
  cluster: Pick<ResourceObject, 'metadata'>,
  spec: DatabaseClusterSpec,
  reportedReady: number,
) {
  const readyReplicas = Math.min(reportedReady, spec.replicas);
  const ready = readyReplicas >= spec.replicas;
  // declared: TypeScript widens string literals returned from a generic definition
  const phase: Phase = ready ? 'Ready' : 'Provisioning';
  const message = `${readyReplicas}/${spec.replicas} replicas ready`;
  return {
    status: { phase, readyReplicas, endpoint: endpoint(cluster, spec) },
    ready: { status: ready, reason: ready ? 'AllReplicasReady' : 'WaitingForReplicas', message },
    conditions: [
      { type: 'Progressing', status: !ready, reason: ready ? 'Stable' : 'Provisioning', message },
    ],
  };
}

export default defineOperator({
  name: 'databasecluster',
  for: DatabaseCluster,
  owns: [kinds.StatefulSet, kinds.Service, kinds.ConfigMap, kinds.Secret],
  // the finalizer objects created before the public API carry
  finalizer: 'example.kubebus.dev/backup-bucket',
  setup: ({ nats, streamReplicas }) => ({ buckets: new BackupBuckets(nats, streamReplicas) }),
  invalidSpec: (message) => ({
    status: { phase: FAILED },
    conditions: [{ type: 'Progressing', status: false, reason: 'InvalidSpec', message }],
  }),

  async reconcile(cluster, ctx) {
    const { spec } = cluster;
    const { buckets } = ctx.deps;
    // replay asks whether the bucket exists instead of creating it
    const bucket = ctx.dryRun
      ? (await buckets.exists(cluster.metadata.uid))
        ? 'exists'
        : 'created'
      : await buckets.ensure(cluster.metadata.uid);
    if (bucket === 'created') {
      ctx.log.info('backup bucket created');
      await ctx.event('Normal', 'BucketCreated', 'Created the backup bucket');
    }
    // The credentials are announced as soon as the Secret's create is answered, beside the
    // applies still under way: the announcement is no hop of its own after the slowest apply.
    // Announced by whichever reconcile finds the Secret unannounced, not only by the one
    // that created it: a crash in between is repaired by the retry instead of losing the Event.
    const announceCredentials = async (): Promise<void> => {
      const [credentials, secret] = await Promise.all([
        ctx.createOnce(newCredentials(cluster, spec)),
        ctx.get(kinds.Secret, names(cluster).secret),
      ]);
      if (credentials !== 'created' && !awaitsAnnouncement(secret)) return;
      // Sent together; the Event goes in the background (ADR 0029) and is retried there.
      // Once the annotation lands, an Event still unsent is lost if the process dies or
      // the apiserver refuses it for good: the retry finds the Secret announced. Until
      // it lands a retry announces again, and the Event, named once, is not doubled.
      await Promise.all([
        ctx.event('Normal', 'CredentialsCreated', `Created Secret ${names(cluster).secret}`, {
          once: 'credentials-created',
        }),
        ctx.apply(announcedCredentials(cluster)),
      ]);
    };
    // called in one turn, so their recorded states are read from the bus in one request;
    // the Secret is created once (the bus records it without its data)
    // (a failed apply ends the reconcile only once the announcement under way has landed:
    // the runtime waits for every ctx call a reconcile started, ADR 0030)
    const [, statefulSet] = await Promise.all([
      announceCredentials(),
      ctx.get(kinds.StatefulSet, names(cluster).statefulSet),
      ctx.apply(desiredService(cluster, spec)),
      ctx.apply(desiredConfigMap(cluster, spec)),
      ctx.apply(desiredStatefulSet(cluster, spec)),
    ]);
    return observed(cluster, spec, statefulSet?.status?.readyReplicas ?? 0);
  },

  async finalize(cluster, ctx) {
    // a failure throws: retried with backoff, and the object is not released
    if ((await ctx.deps.buckets.remove(cluster.metadata.uid)) === 'removed') {
      ctx.log.info('backup bucket removed');
      await ctx.event('Normal', 'BucketRemoved', 'Removed the backup bucket');
    }
  },
});
