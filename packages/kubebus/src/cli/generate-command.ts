// `kubebus generate`'s arguments, options and help, declared apart from the
// other commands so its option list can grow on its own (generate.ts reads
// them from line.values).
import type { CommandSpec } from './command-spec.js';
import { ExitCodes } from './command-spec.js';

export const GENERATE_COMMAND: CommandSpec = {
  name: 'generate',
  section: 'operators',
  arguments: '<operator.ts|.js>',
  takes: { min: 1, max: 1 },
  summary: [
    'a deployable package for the operator (--out): a kustomize base and a Helm',
    'chart with its CRD, RBAC, Deployments per role, topology step, NetworkPolicies,',
    'monitoring and NATS configuration; without --out: the CRD and RBAC on stdout',
  ],
  options: {
    out: {
      type: 'string',
      value: 'dir',
      help: 'write the package there: kustomize/, helm/<operator>/, nats/',
    },
    namespace: {
      type: 'string',
      value: 'ns',
      help: "the operator's namespace (default kubebus-system)",
    },
    image: {
      type: 'string',
      value: 'ref',
      help: "the operator's image, its entrypoint the kubebus binary (default kubebus-<operator>:latest)",
    },
    module: {
      type: 'string',
      value: 'path',
      help: 'the operator module inside the image (default: the path given, relative)',
    },
    format: {
      type: 'string',
      value: 'kustomize|helm|all',
      help: 'what --out writes (default all)',
    },
    'watch-namespaces': {
      type: 'string',
      value: 'a,b',
      help: 'watch only those namespaces: Roles there instead of ClusterRoles',
    },
    only: {
      type: 'string',
      value: 'crd,rbac|nats',
      help: 'on stdout, these parts only (default crd,rbac; nats alone: its users)',
    },
  },
  shared: [],
  run: async (line, host) => {
    await (await import('./generate.js')).generate(line, host);
    return ExitCodes.ok;
  },
};
