// Moved to the shared library (@kubebus/shared/definition): re-exported here
// only so the package's CLI, host and generators keep compiling while they
// move their imports there. Import from @kubebus/shared/definition instead.
export {
  apiVersionOf,
  defineResource,
  isCustomResource,
  resource,
  resourceName,
} from '@kubebus/shared/definition';
export type {
  CustomResource,
  PrinterColumn,
  Resource,
  ResourceDefinition,
  Scope,
  ValidationRule,
} from '@kubebus/shared/definition';
