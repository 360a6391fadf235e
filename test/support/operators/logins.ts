// The renamed-resource operators (login*.ts): a Login whose credentials are a
// Secret named after its user, generated once (createOnce) and kept from the
// runtime's pruning (credentials go only on purpose). When the user changes,
// the old user's Secret must go. The seeded bug learns the old user as an
// update event carries it (an informer's old object, kopf's `old`): the user
// this process saw last for the Login. Its twin lists the Secrets it made for
// the Login and removes every one of another user.
//
// A process sees a change only if it saw what came before: one that started
// after the change (a restart, a replica taking over; kubebus runs each role
// so) or saw two changes as one (the revert of the first hidden) has no old
// user, or the wrong one, and leaves the Secret of the first change behind.
import { randomBytes } from 'node:crypto';
import { defineOperator, defineResource, kinds, type ReconcileContext } from 'kubebus';
import { z } from 'zod';

export const Login = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Login',
  scope: 'Namespaced',
  spec: z.object({ user: z.string().regex(/^[a-z][a-z0-9]{0,15}$/) }),
  status: z.object({ user: z.string(), secret: z.string() }).partial(),
});

type Cleanup = 'the-user-it-saw-before' | 'every-other-users-secret';

/** The label on a Login's Secrets: the Login's name. */
const LOGIN = 'test.kubebus.dev/login';

/** Login uid → the user this process saw last. */
type Seen = Map<string, string>;

export function loginOperator(name: string, cleanup: Cleanup) {
  return defineOperator({
    name,
    for: Login,
    owns: [kinds.Secret],
    // credentials go when the user changes, never by a pruning pass
    prune: { keep: [kinds.Secret] },
    setup: () => ({ seen: new Map() as Seen }),
    async reconcile(login, ctx: ReconcileContext<{ seen: Seen }>) {
      const { name: object, uid } = login.metadata;
      const { user } = login.spec;
      const secret = `${object}-${user}`;
      await ctx.createOnce(kinds.Secret, {
        metadata: { name: secret, labels: { [LOGIN]: object } },
        stringData: { user, password: randomBytes(18).toString('base64url') },
      });
      if (cleanup === 'the-user-it-saw-before') {
        const before = ctx.deps.seen.get(uid);
        if (before !== undefined && before !== user)
          await ctx.delete(kinds.Secret, `${object}-${before}`);
        ctx.deps.seen.set(uid, user);
      } else {
        const made = await ctx.list(kinds.Secret, { labelSelector: `${LOGIN}=${object}` });
        for (const other of made)
          if (other.metadata.name !== secret) await ctx.delete(kinds.Secret, other.metadata.name);
      }
      return { status: { user, secret }, ready: { status: true, reason: 'Issued' } };
    },
  });
}
