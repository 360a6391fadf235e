// The watcher as a role a host can run (the kubebus binary runs it beside the
// others in one process): its config schema and its start.
export { WatcherConfigSchema } from './config.js';
export type { ControllerSpec, WatchMapping, WatcherConfig } from './config.js';
export { startWatcher } from './watcher.js';
export type { RunningWatcher } from './watcher.js';
