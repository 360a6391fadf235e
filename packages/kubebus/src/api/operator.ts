// Moved to the shared library (@kubebus/shared/definition): re-exported here
// only so the package's CLI, host and generators keep compiling while they
// move their imports there. Import from @kubebus/shared/definition instead.
export { declaredResources, defineOperator, isOperator } from '@kubebus/shared/definition';
export type {
  ConditionReport,
  InvalidSpecReport,
  Log,
  Operator,
  OperatorDefinition,
  OperatorHost,
  ReconcileContext,
  ReconcileResult,
  Watch,
} from '@kubebus/shared/definition';
