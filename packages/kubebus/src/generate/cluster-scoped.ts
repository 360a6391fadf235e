// Kubernetes' own cluster-scoped resources, by group and plural: what a rule
// of `rbac.rules` may name that only a ClusterRole can grant (a Role in a
// namespace grants nothing on them). Built-in kinds of `kinds` and the
// operator's own resources say their scope themselves.
const BUILT_IN: Readonly<Record<string, readonly string[]>> = {
  '': ['namespaces', 'nodes', 'persistentvolumes', 'componentstatuses'],
  'rbac.authorization.k8s.io': ['clusterroles', 'clusterrolebindings'],
  'storage.k8s.io': [
    'storageclasses',
    'csidrivers',
    'csinodes',
    'volumeattachments',
    'volumeattributesclasses',
  ],
  'apiextensions.k8s.io': ['customresourcedefinitions'],
  'admissionregistration.k8s.io': [
    'mutatingwebhookconfigurations',
    'validatingwebhookconfigurations',
    'validatingadmissionpolicies',
    'validatingadmissionpolicybindings',
    'mutatingadmissionpolicies',
    'mutatingadmissionpolicybindings',
  ],
  'apiregistration.k8s.io': ['apiservices'],
  'certificates.k8s.io': ['certificatesigningrequests', 'clustertrustbundles'],
  'scheduling.k8s.io': ['priorityclasses'],
  'networking.k8s.io': ['ingressclasses', 'ipaddresses', 'servicecidrs'],
  'node.k8s.io': ['runtimeclasses'],
  'flowcontrol.apiserver.k8s.io': ['flowschemas', 'prioritylevelconfigurations'],
  'resource.k8s.io': ['deviceclasses', 'resourceslices'],
  'storagemigration.k8s.io': ['storageversionmigrations'],
};

/** `<group>/<plural>` of every built-in cluster-scoped resource. */
export const CLUSTER_SCOPED_BUILT_INS: readonly string[] = Object.entries(BUILT_IN).flatMap(
  ([group, plurals]) => plurals.map((plural) => `${group}/${plural}`),
);
