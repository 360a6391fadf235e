// The NATS credentials Secret's keys for this operator, as an env file to
// copy and fill in: one password per user of the generated NATS
// configuration (the Deployments and the topology step read them by these
// keys, names.ts). Values are left empty: kubebus never writes a secret.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { SHARED_NATS_USERS, natsUserOf } from './names.js';
import { stateUserOf } from './nats-users.js';

export function natsSecretExampleOf(operator: Operator, roles: readonly Role[]): string {
  const users = [
    'admin',
    ...roles.map((role) => natsUserOf(operator, role)),
    ...(operator.setup === undefined ? [] : [stateUserOf(operator)]),
    ...SHARED_NATS_USERS.filter((user) => user !== 'admin'),
  ];
  return [
    `# The NATS users' passwords of operator ${operator.name} (kubebus generate), for the`,
    '# Secret kubebus-nats. Copy to nats-users.env (keep it out of git), put in long',
    '# random values (e.g. `openssl rand -hex 24`), then:',
    '#   kubectl -n <namespace> create secret generic kubebus-nats --from-env-file=nats-users.env',
    ...users.map((user) => `${user}=`),
    '',
  ].join('\n');
}
