// kubebus: the public API for operator authors. Define a resource and an
// operator; `kubebus run ./operator.ts` runs it. The definition API lives in
// the shared library (@kubebus/shared/definition) so that the roles speak it
// without importing this package; here it is re-exported, with crdOf.
export { defineResource, resource } from '@kubebus/shared/definition';
export type {
  BodyOf,
  BuiltIn,
  BuiltInBody,
  BuiltInObject,
  CustomResource,
  ObjectOf,
  PrinterColumn,
  Resource,
  ResourceDefinition,
  Scope,
  ValidationRule,
  VersionedResourceDefinition,
  ResourceBasics,
  Conversion,
  Conversions,
  Converted,
  Convertible,
  PartialDeep,
  ServedVersion,
  UntypedConversion,
  VersionSchemas,
} from '@kubebus/shared/definition';
export { defineOperator } from '@kubebus/shared/definition';
export type {
  ConditionReport,
  FinalizeResult,
  InvalidSpecReport,
  EventOptions,
  ListOptions,
  Log,
  OnceEffect,
  OperatorHost,
  Operator,
  OperatorDefinition,
  OperatorRbac,
  RbacRule,
  ReconcileContext,
  ReconcileResult,
  SecretValues,
  RoleReference,
  RuleVerb,
  MappedWatch,
  ReferencedWatch,
  Watch,
} from '@kubebus/shared/definition';
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
} from '@kubebus/shared/definition';
export { crdOf } from './api/crd.js';
export type { ConversionTarget } from './api/conversion-target.js';
export { kinds, TerminalError } from '@kubebus/shared/definition';
