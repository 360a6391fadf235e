// The commands that take an operator project or module: init, run, dev,
// replay. Each module is imported when its command runs, so `kubebus status`
// never loads the host or the test servers.
import type { CommandSpec } from './command-spec.js';
import { ExitCodes } from './command-spec.js';
import { CONNECTION, OUTPUT } from './shared-options.js';

const OPERATOR = '<operator.ts|.js>';

export const OPERATOR_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'init',
    section: 'operators',
    arguments: '<dir>',
    takes: { min: 1, max: 1 },
    summary: ['a new operator project: package.json, operator.ts, its test, a Dockerfile'],
    options: {
      group: {
        type: 'string',
        value: 'group',
        help: 'the API group of its resource (default sites.example.com)',
      },
      kind: {
        type: 'string',
        value: 'Kind',
        help: 'the kind of its resource (default StaticSite)',
      },
      scope: {
        type: 'string',
        value: 'Namespaced|Cluster',
        help: 'where its objects live (default Namespaced)',
      },
    },
    shared: [],
    run: async (line) => {
      (await import('./init.js')).init(line);
      return ExitCodes.ok;
    },
  },
  {
    name: 'run',
    section: 'operators',
    arguments: OPERATOR,
    takes: { min: 1, max: 1 },
    summary: [
      'run an operator against KUBECONFIG and KUBEBUS_NATS_URL; all roles in one',
      'process by default, one role per process in production',
    ],
    options: {
      role: {
        type: 'string',
        value: 'all|watcher|reconciler|status-writer',
        help: 'the role to run (default all)',
      },
    },
    shared: [],
    run: async (line) => {
      await (await import('./run.js')).run(line);
      return 'running';
    },
  },
  {
    name: 'dev',
    section: 'operators',
    arguments: OPERATOR,
    takes: { min: 1, max: 1 },
    summary: [
      'the CRD installed and the operator running with a readable log: on the current',
      'kube context when it answers (nats-server on loopback), else on loopback servers',
    ],
    options: {
      cluster: {
        type: 'string',
        value: 'existing|local',
        help: 'the current context, or loopback servers (default: existing when it answers)',
      },
      context: {
        type: 'string',
        value: 'name',
        help: 'the kubeconfig context for --cluster existing (default: the current one)',
      },
      'no-stand-in': {
        type: 'boolean',
        help: 'no stand-in kubelet: Deployments and StatefulSets never become ready',
      },
      'log-level': {
        type: 'string',
        value: 'trace|debug|info|warn|error',
        help: 'the operator log (default info)',
      },
    },
    shared: [],
    run: async (line, host) => {
      await (await import('./dev.js')).dev(line, host);
      return 'running';
    },
  },
  {
    name: 'storage migrate',
    section: 'operators',
    arguments: OPERATOR,
    takes: { min: 1, max: 1 },
    summary: [
      "rewrite every object of the operator's resource in its storage version, then",
      "trim the CRD's status.storedVersions to it (before dropping an old version)",
    ],
    options: {},
    shared: [],
    run: async (line, host) =>
      (await import('./migrate-storage.js')).migrateStorageCommand(line, host),
  },
  {
    name: 'storage check',
    section: 'operators',
    arguments: OPERATOR,
    takes: { min: 1, max: 1 },
    summary: [
      "whether the operator's conversions and schemas take every object the cluster",
      'stores (before its CRD is applied); exit 1 naming each one they do not',
    ],
    options: {},
    shared: [],
    run: async (line, host) => (await import('./check-storage.js')).checkStorageCommand(line, host),
  },
  {
    name: 'replay',
    section: 'operators',
    arguments: `${OPERATOR} <namespace/name | name>`,
    takes: { min: 2, max: 2 },
    summary: [
      "re-run the operator over an object's recorded history as a dry run, with what",
      'it reads as it was then, and the writes it would make as diffs;',
      "exit 1 when a revision's status differs from what was recorded",
    ],
    options: {
      from: {
        type: 'string',
        value: 'seq',
        help: 'from this revision (kubebus history shows them)',
      },
      to: { type: 'string', value: 'seq', help: 'up to this revision' },
    },
    shared: [CONNECTION, OUTPUT],
    run: async (line, host) => (await import('./replay.js')).replayCommand(line, host),
  },
];
