// The option groups several commands take: where NATS is (the nats CLI's
// flags), and how to print.
import type { SharedOptions } from './command-spec.js';

export const CONNECTION: SharedOptions = {
  title: 'connection (else the selected nats context, else KUBEBUS_NATS_*)',
  options: {
    server: { type: 'string', short: 's', value: 'url', help: 'nats://host:4222[,…]' },
    user: { type: 'string', value: 'user', help: 'the NATS user' },
    password: { type: 'string', value: 'password', help: "the NATS user's password" },
    creds: { type: 'string', value: 'file', help: 'a .creds file (JWT and NKey)' },
    context: { type: 'string', value: 'name', help: 'a nats context (nats context ls)' },
  },
};

export const OUTPUT: SharedOptions = {
  title: 'output',
  options: {
    output: { type: 'string', short: 'o', value: 'format', help: 'table (default), json or yaml' },
    json: { type: 'boolean', help: 'the same as -o json' },
  },
};
