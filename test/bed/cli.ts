// `npm run testbed`: starts a test bed and prints how to reach it, for a person
// to poke at; Ctrl-C stops everything.
import { TestBed } from './testbed.js';

const bed = await TestBed.start({ controllerManager: true, keepDir: true });
process.stdout.write(
  [
    'kubebus test bed is up:',
    `  kube-apiserver  ${bed.apiserverUrl}`,
    `  kubeconfig      export KUBECONFIG=${bed.kubeconfigPath}`,
    `  nats            ${bed.natsUrl}`,
    `  logs and data   ${bed.dir}`,
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);
const stop = () => {
  bed.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
