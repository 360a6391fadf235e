// The status writer as a role a host can run: its config schema and its start.
export { StatusWriterConfigSchema } from './config.js';
export type { StatusWriterConfig } from './config.js';
export { startStatusWriter } from './status-writer.js';
export type { RunningStatusWriter } from './status-writer.js';
export type { IntentTaken } from './status-applier.js';
