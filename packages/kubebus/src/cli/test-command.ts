// `kubebus test`'s arguments, options and help: the operator on the real test
// bed, unperturbed and then under each perturbation schedule (perturb/).
import type { CommandSpec } from './command-spec.js';
import { OUTPUT } from './shared-options.js';

export const TEST_COMMAND: CommandSpec = {
  name: 'test',
  section: 'operators',
  arguments: '<operator.ts|.js>',
  takes: { min: 1, max: 1 },
  summary: [
    'perturbation testing on real servers: the operator over a workload (your samples,',
    'specs generated from the zod schema, revisions of what they refer to) unperturbed,',
    'then crashed after each write, with changes it never sees, with older revisions read',
    "from the bus, with the watcher's feed held behind its writes, with its status writer",
    'restarted, its partition handed over and the next change applied mid-reconcile;',
    'exit 1 at the first schedule that fails an oracle',
  ],
  options: {
    budget: {
      type: 'string',
      value: 'n',
      help: 'try at most n schedules (default 24)',
    },
    layout: {
      type: 'string',
      value: 'three|one',
      help: 'three: each role apart, as the generated Deployments (default); one: the reconciler and status writer in one process, as kubebus run',
    },
    'reach-within': {
      type: 'string',
      value: 'duration',
      help: 'how long a perturbed run may take to converge, e.g. 90s (default 60s)',
    },
    perturb: {
      type: 'string',
      value: 'kinds',
      help: 'only these kinds of schedule, e.g. stale or intermediate,status-restart (default all)',
    },
    replay: {
      type: 'string',
      value: 'schedule',
      help: 'run only this schedule, e.g. intermediate:s0:k2 (a failure prints it)',
    },
    samples: {
      type: 'string',
      value: 'file.yaml',
      help: 'objects of the operator’s kind (YAML documents) the workload starts from; documents of other kinds (a Secret they refer to) are made first in every run, and a later document of one is a revision applied as a step',
    },
    seed: { type: 'string', value: 'n', help: 'the generated specs follow from it (default 1)' },
  },
  shared: [OUTPUT],
  run: async (line, host) => (await import('./test.js')).testCommand(line, host),
};
