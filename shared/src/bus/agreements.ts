// What the processes of one controller must agree on — how many partitions
// its work is split into (the watcher publishes to them, the reconcilers
// consume them), how many the status stream has (reconcilers publish,
// status writers consume) — recorded in a KV bucket by the first process to
// start and checked by every later one. A process that disagrees refuses to
// start with one line saying who registered what, instead of publishing work
// nobody consumes. Interests (for, owns) may change in a rolling update: a
// difference is logged, and the newest process' view is kept.
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/logger.js';

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

export async function agree(
  kv: KV,
  key: string,
  ours: Omit<Agreement, 'at'>,
  log: Logger,
): Promise<void> {
  const entry = await kv.get(key);
  let registered: Agreement | undefined;
  if (entry !== null && entry.operation === 'PUT') {
    const parsed = AgreementSchema.safeParse(entry.json());
    registered = parsed.success ? parsed.data : undefined;
  }
  if (registered !== undefined && registered.partitions !== ours.partitions) {
    throw new KubebusError(
      ErrorCodes.InvalidConfig,
      `${key} is split into ${registered.partitions} partitions (registered by ${registered.registeredBy} at ${registered.at}) but this process says ${ours.partitions}: every process of a controller must use the same count. Use ${registered.partitions}, or stop all of them and delete the key (nats kv del kubebus_agreements ${key}) to change it`,
    );
  }
  const sameInterests =
    registered === undefined ||
    ((ours.for === undefined || registered.for === undefined || ours.for === registered.for) &&
      (ours.owns === undefined ||
        registered.owns === undefined ||
        [...ours.owns].sort().join() === [...registered.owns].sort().join()));
  if (!sameInterests)
    log.warn(
      { key, registered, ours },
      'this process declares other interests than the one registered before it (a rolling update?); keeping this one',
    );
  const unchanged =
    registered !== undefined &&
    sameInterests &&
    (ours.for === undefined || registered.for !== undefined) &&
    (ours.owns === undefined || registered.owns !== undefined);
  if (!unchanged)
    await kv.put(key, JSON.stringify({ ...registered, ...ours, at: new Date().toISOString() }));
}
