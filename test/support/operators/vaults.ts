// The handover tests' operator: a Vault whose credentials Secret is created
// once and announced with an Event (CredentialsCreated) by whichever reconcile
// finds it unannounced — examples/databasecluster's pattern, so a crash
// between creating and announcing is repaired by the retry, not lost. A
// reconcile that created the Secret announces it at once; a second instance
// that took the partition meanwhile finds it unannounced and announces it too:
// only the runtime's fencing keeps the first one's Event from landing twice.
import { randomBytes } from 'node:crypto';
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Vault = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Vault',
  scope: 'Namespaced',
  spec: z.object({ text: z.string().min(1).max(20) }),
  status: z.object({ page: z.string() }).partial(),
});

const ANNOUNCED = 'test.kubebus.dev/announced';

export default defineOperator({
  name: 'vaults',
  for: Vault,
  owns: [kinds.Secret, kinds.ConfigMap],
  async reconcile(vault, ctx: ReconcileContext) {
    const { name } = vault.metadata;
    const credentials = `${name}-credentials`;
    const created = await ctx.createOnce(kinds.Secret, {
      metadata: { name: credentials, annotations: { [ANNOUNCED]: 'false' } },
      stringData: { password: randomBytes(18).toString('base64url') },
    });
    const secret = await ctx.get(kinds.Secret, credentials);
    if (created === 'created' || secret?.metadata.annotations?.[ANNOUNCED] === 'false')
      // sent together: a crash lands both or neither, as far as a crash can
      await Promise.all([
        ctx.event('Normal', 'CredentialsCreated', `Created Secret ${credentials}`),
        ctx.apply(kinds.Secret, {
          metadata: { name: credentials, annotations: { [ANNOUNCED]: 'true' } },
        }),
      ]);
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: `${name}-page` },
      data: { page: vault.spec.text },
    });
    return { status: { page: vault.spec.text }, ready: { status: true, reason: 'Written' } };
  },
});
