// The stale perturbation's operators (journaled*.ts): a Greeting's journal, a
// ConfigMap listing every text the greeting had, one entry per generation,
// each reconcile appending to what the journal held. Reading the journal back
// is the whole difference: by name (ctx.get, which read-your-own-writes keeps
// at least as new as the operator's own last write), or by label
// (ctx.list, which it does not: a stale list shows an older journal, and the
// entries since are lost).
//
// Appending to its own record is also why the journal needs every change:
// under `unobserved` schedules (two changes coalesced) both twins miss an
// entry. The stale-read tests run them with --perturb stale.
import { kinds, defineOperator, type ReconcileContext, type ResourceObject } from 'kubebus';
import { Greeting } from './greetings.js';

const JOURNAL_LABEL = 'test.kubebus.dev/journal-of';

type Lookup = 'by-name' | 'by-label';

async function journalOf(
  ctx: ReconcileContext,
  object: string,
  lookup: Lookup,
): Promise<ResourceObject | undefined> {
  if (lookup === 'by-name') return ctx.get(kinds.ConfigMap, `${object}-journal`);
  const found = await ctx.list(kinds.ConfigMap, { labelSelector: `${JOURNAL_LABEL}=${object}` });
  return found[0];
}

export function journalOperator(name: string, lookup: Lookup) {
  return defineOperator({
    name,
    for: Greeting,
    owns: [kinds.ConfigMap],
    async reconcile(greeting, ctx: ReconcileContext) {
      const { name: object, uid } = greeting.metadata;
      const journal = await journalOf(ctx, object, lookup);
      // a re-created greeting (another uid) starts a journal of its own
      const mine = journal?.metadata.ownerReferences?.some((ref) => ref.uid === uid) === true;
      const kept = mine
        ? (journal as { data?: Record<string, string> }).data?.['entries']
        : undefined;
      const entries = kept === undefined ? [] : (JSON.parse(kept) as string[]);
      const entry = `${greeting.metadata.generation ?? 0}:${greeting.spec.text}`;
      if (entries.at(-1) !== entry) entries.push(entry);
      await ctx.apply(kinds.ConfigMap, {
        metadata: { name: `${object}-journal`, labels: { [JOURNAL_LABEL]: object } },
        data: { entries: JSON.stringify(entries) },
      });
      return {
        status: { length: entries.length },
        ready: { status: true, reason: 'Journaled' },
      };
    },
  });
}
