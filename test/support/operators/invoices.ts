// The declared-side-effect operators (charged*.ts): an Invoice charged once
// per object, through an external payment service (here a NATS KV bucket,
// outside Kubernetes), the call declared with ctx.once; a receipt ConfigMap
// records that it was charged. The receipt is written after the charge, so a
// crash between the two leaves a charge without a receipt. Whether the
// operator then asks the payment service before charging again is the whole
// difference between the correct operator and the seeded bug.
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Invoice = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Invoice',
  scope: 'Namespaced',
  spec: z.object({ amount: z.int().min(1).max(1000) }),
  status: z.object({ amount: z.int() }).partial(),
});

/** The payment service: one entry per charge, by its idempotency key. */
export class Payments {
  readonly #nats: NatsConnection;
  #kv: Promise<KV> | undefined;

  constructor(nats: NatsConnection) {
    this.#nats = nats;
  }

  #bucket(): Promise<KV> {
    // a failed attempt (NATS down) is not remembered
    this.#kv ??= new Kvm(this.#nats).create('kubebus-test-payments').catch((error: unknown) => {
      this.#kv = undefined;
      throw error;
    });
    return this.#kv;
  }

  async charge(idempotencyKey: string, amount: number): Promise<void> {
    await (await this.#bucket()).put(idempotencyKey, String(amount));
  }

  async charged(idempotencyKey: string): Promise<boolean> {
    return (await (await this.#bucket()).get(idempotencyKey)) !== null;
  }
}

type Retry = 'trusts-its-receipt' | 'asks-the-payment-service';

export function invoiceOperator(name: string, retry: Retry) {
  return defineOperator({
    name,
    for: Invoice,
    owns: [kinds.ConfigMap],
    setup: ({ nats }) => ({ payments: new Payments(nats) }),
    async reconcile(invoice, ctx: ReconcileContext<{ payments: Payments }>) {
      const { name: object, uid } = invoice.metadata;
      const { amount } = invoice.spec;
      const { payments } = ctx.deps;
      const receipt = await ctx.get(kinds.ConfigMap, `${object}-receipt`);
      // a re-created invoice (another uid) is charged again
      if (receipt?.metadata.ownerReferences?.some((ref) => ref.uid === uid) !== true)
        await ctx.once('charge', {
          perform: (key) => payments.charge(key, amount),
          ...(retry === 'asks-the-payment-service' ? { done: (key) => payments.charged(key) } : {}),
        });
      // applied every time: what a reconcile does not apply, the runtime prunes
      await ctx.apply(kinds.ConfigMap, {
        metadata: { name: `${object}-receipt` },
        data: { charged: 'yes' },
      });
      return { status: { amount }, ready: { status: true, reason: 'Charged' } };
    },
  });
}
