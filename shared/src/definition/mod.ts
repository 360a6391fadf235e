// The definition API: resources, operators, what a reconcile gets and
// returns, TerminalError. The lowest layer: the runtime, the roles and the
// public package (which re-exports it as `kubebus`) all speak it; it imports
// nothing of kubebus but its error codes.
export {
  apiVersionOf,
  defineResource,
  isCustomResource,
  resource,
  pluralOf,
  resourceName,
} from './resource.js';
export type {
  BodyOf,
  CustomResource,
  ObjectOf,
  PrinterColumn,
  Resource,
  ResourceBasics,
  ResourceDefinition,
  Scope,
  ValidationRule,
  VersionedResourceDefinition,
} from './resource.js';
export { ConversionError, convertObject, versionNamed } from './convert-object.js';
export type { ConvertibleObject } from './convert-object.js';
export type {
  Conversion,
  Conversions,
  Converted,
  Convertible,
  PartialDeep,
  ServedVersion,
  UntypedConversion,
  VersionSchemas,
} from './versions.js';
export { DEFAULT_PARTITIONS, declaredResources, defineOperator, isOperator } from './operator.js';
export type {
  MappedWatch,
  Operator,
  OperatorDefinition,
  OperatorHost,
  ReferencedWatch,
  Watch,
} from './operator.js';
export type { OperatorRbac, RbacRule, RoleReference, RuleVerb } from './rbac.js';
export type {
  EventOptions,
  ListOptions,
  Log,
  OnceEffect,
  ReconcileContext,
  RuntimeContext,
  SecretValues,
} from './context.js';
export type {
  ConditionReport,
  FinalizeResult,
  InvalidSpecReport,
  ReconcileResult,
} from './result.js';
export type {
  Condition,
  ConditionStatus,
  CustomBody,
  DesiredBody,
  DesiredMeta,
  DesiredObject,
  KubeObjectOf,
  ObjectMeta,
  ObjectRef,
  OwnerReference,
  ResourceObject,
  RuntimeStatus,
} from './objects.js';
export * as kinds from './kinds.js';
export type { BuiltIn, BuiltInBody, BuiltInObject } from './kinds.js';
export type { Json } from './json.js';
export { TerminalError, isTerminalError } from './terminal-error.js';
