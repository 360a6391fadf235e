// Moved to the shared library (@kubebus/shared/definition): re-exported here
// only so the package's CLI, host and test kit keep compiling while they move
// their imports there. Import from @kubebus/shared/definition instead.
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
} from '@kubebus/shared/definition';
