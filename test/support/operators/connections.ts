// An operator that reads a referenced Secret's values (ctx.readSecret): a
// Connection names the Secret holding its database password, and its status
// shows a fingerprint of the password, never the password. It declares the
// one rule the read needs, limited by name, and watches the Secret it names
// (`references`: the watcher keeps the index) so a new password reaches the
// status without waiting for the resync.
import { createHash } from 'node:crypto';
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

/** The Secrets its reconciler may read: the generated role's resourceNames. */
export const READABLE = ['db-password', 'db-password-2', 'db-password-3'];

export const Connection = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Connection',
  scope: 'Namespaced',
  spec: z.object({ passwordSecret: z.string().min(1) }),
  status: z.object({ fingerprint: z.string(), keys: z.number() }).partial(),
});

/** What the status shows of a password: enough to tell a rotation, nothing to log in with. */
export const fingerprintOf = (password: string, length = 16) =>
  createHash('sha256').update(password).digest('hex').slice(0, length);

/**
 * The operator; a fingerprint of another length makes the "next version" replay
 * is tried with, and `watchesSecret: false` the bug of a read without its watch.
 */
export const connectionsOperator = (fingerprintLength = 16, { watchesSecret = true } = {}) =>
  defineOperator({
    name: 'connections',
    for: Connection,
    // the Secret it names: a new password reconciles it (the watcher's index, no label needed)
    watches: watchesSecret
      ? [
          {
            resource: kinds.Secret,
            references: (connection) => [{ name: connection.spec.passwordSecret }],
          },
        ]
      : [],
    rbac: {
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: READABLE }],
    },
    async reconcile(connection, ctx) {
      const values = await ctx.readSecret(connection.spec.passwordSecret);
      // not there yet (made after the Connection): said on the object; its creation
      // reconciles it again (watched by reference)
      if (values === undefined)
        return {
          ready: {
            status: false,
            reason: 'SecretMissing',
            message: `Secret ${connection.spec.passwordSecret} not found`,
          },
        };
      if (values['password'] === undefined)
        return {
          ready: {
            status: false,
            reason: 'PasswordMissing',
            message: `Secret ${connection.spec.passwordSecret} has no key password`,
          },
        };
      return {
        status: {
          fingerprint: fingerprintOf(values['password'], fingerprintLength),
          keys: Object.keys(values).length,
        },
      };
    },
  });

export default connectionsOperator();
