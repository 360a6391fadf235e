// What the processes of one controller must agree on — how many partitions
// its work is split into (the watcher publishes to them, the reconcilers
// consume them), how many the status stream has (reconcilers publish,
// status writers consume) — recorded in a KV bucket by the first process to
// start and checked by every later one. A process that disagrees refuses to
// start with one line saying who registered what, instead of publishing work
// nobody consumes — unless no other process of the controller is alive: then
// it repartitions (registers its count), and the upgrade sweep, which knows
// the count, reconciles every object again in its new partition. Interests
// (for, owns) may change in a rolling update: a difference is logged, and the
// newest process' view is kept.
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/logger.js';
import type { LeaseBucket } from './lease-bucket.js';
import { PROCESS_INSTANCE, leaseGroups, memberInstanceOf } from './partition-leases.js';

const AgreementSchema = z.object({
  partitions: z.number().int().positive(),
  for: z.string().optional(),
  owns: z.array(z.string()).optional(),
  registeredBy: z.string(),
  at: z.string(),
});
type Agreement = z.infer<typeof AgreementSchema>;

/**
 * The keys of one controller (operator) all start with its name, so its NATS
 * users may write `$KV.kubebus_agreements.<controller>.>` and no other
 * operator's: `<controller>.work`, `<controller>.status`, `<controller>.sweep.p<n>`.
 */
export const agreementKeys = {
  work: (controller: string) => `${controller}.work`,
  status: (controller: string) => `${controller}.status`,
  /** which version of the operator last swept a partition (upgrade-sweep.ts) */
  sweep: (controller: string, partition: number) => `${controller}.sweep.p${partition}`,
  /** every key of the controller (a permission, a listing) */
  of: (controller: string) => `${controller}.>`,
} as const;

/** The agreement under `key` and its entry; undefined if none is registered (or it is unreadable). */
async function readAgreement(kv: KV, key: string) {
  const entry = await kv.get(key);
  if (entry === null || entry.operation !== 'PUT') return { entry, registered: undefined };
  const parsed = AgreementSchema.safeParse(entry.json());
  return { entry, registered: parsed.success ? parsed.data : undefined };
}

/** The partition count registered under `key`; undefined if none is (or it is unreadable). */
export async function registeredPartitions(kv: KV, key: string): Promise<number | undefined> {
  return (await readAgreement(kv, key)).registered?.partitions;
}

/**
 * Who else of the controller is alive: what a process that disagrees with the
 * registered count asks before it repartitions. Undefined: it may not (the
 * watcher, which holds no lease, only follows what the reconcilers registered).
 */
export interface Repartitioning {
  /** the live processes of the controller other than this one (their lease members) */
  readonly othersAlive: () => Promise<string[]>;
  /** a count registered this recently may belong to a process that has not joined yet */
  readonly settleMs: number;
  readonly now?: () => number;
}

export async function agree(
  kv: KV,
  key: string,
  ours: Omit<Agreement, 'at'>,
  log: Logger,
  repartitioning?: Repartitioning,
): Promise<void> {
  const { entry, registered } = await readAgreement(kv, key);
  let repartitioned = false;
  if (registered !== undefined && registered.partitions !== ours.partitions) {
    const refusal = await refusalToRepartition(key, registered, ours, repartitioning);
    if (refusal !== undefined) throw new KubebusError(ErrorCodes.InvalidConfig, refusal);
    log.warn(
      {
        key,
        from: registered.partitions,
        to: ours.partitions,
        registeredBy: registered.registeredBy,
      },
      'repartitioning: no other process of the controller is alive; every object is reconciled again in its new partition',
    );
    repartitioned = true;
  }
  const sameInterests =
    registered === undefined ||
    ((ours.for === undefined || registered.for === undefined || ours.for === registered.for) &&
      (ours.owns === undefined ||
        registered.owns === undefined ||
        [...new Set(ours.owns)].sort().join() === [...new Set(registered.owns)].sort().join()));
  // an upgrade that changed `owns`: expected, said once as this version registers; another
  // primary kind under the same name is more likely two operators sharing a name
  if (!sameInterests) {
    const otherFor =
      registered.for !== undefined && ours.for !== undefined && registered.for !== ours.for;
    // another version of the same kind (an upgrade's new storage version) is no other primary
    const otherPrimary =
      otherFor && withoutVersion(registered.for ?? '') !== withoutVersion(ours.for ?? '');
    log[otherPrimary ? 'warn' : 'info'](
      { key, registered, ours },
      otherPrimary
        ? `this operator reconciles ${ours.for}, the one registered under its name before it ${registered.for}: two operators sharing a name share their work and records — give each its own name (an upgrade that changed the kind may go on)`
        : otherFor
          ? 'the operator reconciles another version of its kind than the version registered before it (an upgrade): registering this version’s'
          : 'the operator owns other kinds than the version registered before it (an upgrade): registering this version’s',
    );
  }
  const unchanged =
    !repartitioned &&
    registered !== undefined &&
    sameInterests &&
    (ours.for === undefined || registered.for !== undefined) &&
    (ours.owns === undefined || registered.owns !== undefined);
  if (unchanged) return;
  const value = JSON.stringify({ ...registered, ...ours, at: new Date().toISOString() });
  // a repartition replaces exactly what it read: two at once, and the second fails
  if (repartitioned && entry !== null) await kv.update(key, value, entry.revision);
  else await kv.put(key, value);
}

/**
 * The reconcilers and status writers of the controller alive now, other than
 * `replicaId` (this process): their member keys in the leases bucket, which
 * expire a lease TTL after their process stopped renewing them.
 */
export function repartitioningBy(
  leases: LeaseBucket,
  controller: string,
  replicaId: string,
  leaseTtlMs: number,
): Repartitioning {
  return {
    settleMs: leaseTtlMs,
    async othersAlive() {
      const alive: string[] = [];
      for (const group of [leaseGroups.work(controller), leaseGroups.status(controller)]) {
        const prefix = `${group}.member.`;
        for (const key of await leases.keysUnder(prefix)) {
          const replica = key.slice(prefix.length);
          const role = group.slice(controller.length + 1);
          if (replica !== replicaId) alive.push(`${role} ${replica}`);
          // under this process' own name: another process given the same id, or one that
          // died a moment ago (its key waits for the TTL); either may still act
          else if (!(await isThisProcess(leases, key)))
            alive.push(`${role} ${replica} (another process under this replica id)`);
        }
      }
      return alive;
    },
  };
}

/** Why this process may not register its count over the registered one; undefined if it may. */
async function refusalToRepartition(
  key: string,
  registered: Agreement,
  ours: Omit<Agreement, 'at'>,
  repartitioning: Repartitioning | undefined,
): Promise<string | undefined> {
  const said = `${key} is split into ${registered.partitions} partitions (registered by ${registered.registeredBy} at ${registered.at}) but this process says ${ours.partitions}`;
  if (repartitioning === undefined)
    return `${said}: every process of a controller must use the same count. Use ${registered.partitions}, or stop every process of the operator and start its reconcilers with ${ours.partitions} first (they repartition it)`;
  const alive = await repartitioning.othersAlive();
  if (alive.length > 0)
    return `${said}, and ${alive.length} of its processes are alive (${alive.slice(0, 3).join(', ')}${alive.length > 3 ? ', ...' : ''}). Use ${registered.partitions}, or stop every process of the operator (scale its roles to 0) and start them with ${ours.partitions}: the first one repartitions it`;
  const sinceRegistered = (repartitioning.now ?? Date.now)() - Date.parse(registered.at);
  if (!(sinceRegistered >= repartitioning.settleMs))
    return `${said}, registered less than ${Math.ceil(repartitioning.settleMs / 1_000)} s ago: its process may still be starting. Use ${registered.partitions}, or start this one again once every process with ${registered.partitions} has stopped`;
  return undefined;
}

/** Whether this process wrote the member key (partition-leases.ts). */
async function isThisProcess(leases: LeaseBucket, key: string): Promise<boolean> {
  const entry = await leases.kv.get(key);
  return entry !== null && memberInstanceOf(entry.string()) === PROCESS_INSTANCE;
}

/** `resource.version.group` without its version: the kind a name stands for. */
function withoutVersion(name: string): string {
  const [resource = '', , ...group] = name.split('.');
  return [resource, ...group].join('.');
}
