// The resource of the perturbation tests' operators (checkpointed*.ts): a
// Greeting whose page, a ConfigMap, the operator writes, with a checkpoint
// ConfigMap recording which generation it finished. Which of the two it
// writes first is the whole difference between the correct operator and the
// seeded bug.
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';
import { checkpointed, writeInOrder, type Order } from './checkpoint-order.js';

export const Greeting = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Greeting',
  scope: 'Namespaced',
  spec: z.object({
    text: z.string().min(1).max(20),
    copies: z.int().min(1).max(3).default(1),
    style: z.enum(['plain', 'loud']).optional(),
  }),
  status: z.object({ length: z.int() }).partial(),
});

export function greetingsOperator(name: string, order: Order) {
  return defineOperator({
    name,
    for: Greeting,
    owns: [kinds.ConfigMap],
    // the checkpoint lets a reconcile skip the page: it must not be pruned then
    prune: false,
    async reconcile(greeting, ctx: ReconcileContext) {
      const { name: object } = greeting.metadata;
      const { text, copies, style } = greeting.spec;
      const generation = String(greeting.metadata.generation ?? 0);
      const page = (style === 'loud' ? text.toUpperCase() : text).repeat(copies);
      const writePage = () =>
        ctx.apply(kinds.ConfigMap, { metadata: { name: `${object}-page` }, data: { page } });
      const writeCheckpoint = () =>
        ctx.apply(kinds.ConfigMap, {
          metadata: { name: `${object}-checkpoint` },
          data: { generation },
        });
      const checkpoint = await ctx.get(kinds.ConfigMap, `${object}-checkpoint`);
      if (!checkpointed(checkpoint, greeting))
        await writeInOrder(order, writePage, writeCheckpoint);
      return { status: { length: page.length }, ready: { status: true, reason: 'Written' } };
    },
  });
}
