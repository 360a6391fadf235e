// The reconciler as a role a host can run: its config schema and its start,
// given the reconciler to run.
export { ReconcilerConfigSchema } from './config.js';
export type { ReconcilerConfig } from './config.js';
export { startReconcilerService } from './reconciler-service.js';
export type { ReconcilerPlan, ReconcilerTools, RunningReconciler } from './reconciler-service.js';
export { ReplayEnvSchema, formatReplay, replay, replayDiverged } from './replay.js';
export type { ReplayEnv, ReplayStep, ReplayTools } from './replay.js';
export { OperatorReconciler } from './operator/operator-reconciler.js';
export type { OperatorReconcilerDeps } from './operator/operator-reconciler.js';
export { refOf } from './operator/known-resources.js';
export { operatorPlan } from './operator/operator-plan.js';
