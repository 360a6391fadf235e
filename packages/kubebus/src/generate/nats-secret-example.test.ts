// The env file `kubebus generate` writes for the NATS credentials Secret
// names exactly the users of the NATS configuration it writes beside it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { natsSecretExampleOf } from './nats-secret-example.js';
import { natsServerConfigOf } from './nats-server.js';
import { plain, site } from './test-operators.js';

const keysOf = (env: string) =>
  env
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.replace(/=$/, ''));

const usersOf = (config: string) =>
  [...config.matchAll(/user: "([^"]+)"/g)].map(([, user]) => user);

describe("the NATS credentials Secret's keys", () => {
  for (const operator of [site, plain])
    it(`are the users of the generated NATS configuration (${operator.name})`, () => {
      const keys = keysOf(natsSecretExampleOf(operator, ROLES));
      assert.deepEqual([...keys].sort(), usersOf(natsServerConfigOf(operator, ROLES)).sort());
      assert.ok(keys.includes(`${operator.name}-reconciler`));
      // nothing filled in: kubebus never writes a password
      assert.ok(
        natsSecretExampleOf(operator, ROLES)
          .split('\n')
          .every((line) => !/=./.test(line) || line.startsWith('#')),
      );
    });
});
