// A Delivery announced once to a receiver outside Kubernetes (ctx.once
// without `done`: the receiver cannot be asked), its answer in the status.
// Every call made is counted here, in the process that runs the operator.
import { defineOperator, defineResource } from 'kubebus';
import { z } from 'zod';

export const Delivery = defineResource({
  group: 'once.test.kubebus.dev',
  version: 'v1',
  kind: 'Delivery',
  scope: 'Namespaced',
  spec: z.object({ round: z.int() }),
  status: z.object({ answer: z.enum(['performed', 'done']), round: z.int() }).partial(),
});

/** The idempotency keys of the calls made, in order. */
export const made: string[] = [];

export default defineOperator({
  name: 'deliveries',
  for: Delivery,
  async reconcile(delivery, ctx) {
    const answer = await ctx.once('announce', {
      perform: (key) => {
        made.push(key);
        return Promise.resolve();
      },
    });
    return { status: { answer, round: delivery.spec.round } };
  },
});
