// kubebus: the public API for operator authors. Define a resource and an
// operator; `kubebus run ./operator.ts` runs it.
export { defineResource, resource, apiVersionOf, resourceName } from './api/resource.js';
export type {
  CustomResource,
  PrinterColumn,
  Resource,
  ResourceDefinition,
  Scope,
  ValidationRule,
} from './api/resource.js';
export { declaredResources, defineOperator, isOperator } from './api/operator.js';
export type {
  ConditionReport,
  InvalidSpecReport,
  Log,
  OperatorHost,
  Operator,
  OperatorDefinition,
  ReconcileContext,
  ReconcileResult,
  Watch,
} from './api/operator.js';
export type {
  Condition,
  ConditionStatus,
  DesiredObject,
  KubeObjectOf,
  ObjectMeta,
  ObjectRef,
  OwnerReference,
  ResourceObject,
  RuntimeStatus,
} from './api/objects.js';
export { crdOf } from './api/crd.js';
export * as kinds from './api/kinds.js';
export { TerminalError } from './api/terminal-error.js';
