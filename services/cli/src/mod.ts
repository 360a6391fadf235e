// @kubebus/cli/commands: the bus commands of the kubebus command line, each a
// function of typed options and a BusContext (a NATS connection, an optional
// apiserver client, writers). No argv, no environment, no exit here: the
// command line (packages/kubebus/src/cli) parses those and calls these.
export { OUTPUT_FORMATS, machine } from './command.js';
export type { BusContext, CommandOutcome, OutputFormat, Writer } from './command.js';
export { UsageError, isUsageError } from './usage-error.js';
export { NoNatsServerError, connectionOf } from './connection.js';
export type { Connection, ConnectionEnv, ConnectionFlags } from './connection.js';
export type { ObjectRef } from './resolve-resource.js';
export type { LetterFilter } from './dlq.js';
export { printable } from './dlq.js';
export { safeText } from './terminal-safe.js';
export { formatAge } from './table.js';
export { historyCommand } from './history-command.js';
export { readDeadLettersOf } from './history.js';
export type { NumberedLetter } from './history.js';
export { statusCommand } from './status-command.js';
export { readStatus } from './status.js';
export { tailCommand } from './tail-command.js';
export type { TailOptions } from './tail-command.js';
export { lagCommand } from './lag-command.js';
export { dlqInspectCommand, dlqListCommand, dlqRedriveCommand } from './dlq-commands.js';
export type { RedriveOptions } from './dlq-commands.js';
export { topologyCommand } from './topology-command.js';
export type { TopologyOptions } from './topology-command.js';
