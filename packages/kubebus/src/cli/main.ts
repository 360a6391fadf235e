#!/usr/bin/env node
// kubebus: the one command line — run, dev, generate, replay and init
// operators; history, status, tail, lag, dlq and topology on the bus. The only
// module of the package that touches the process: argv, the environment,
// stdout/stderr, signals and the exit status (commands get them as a Host).
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args[0] === 'run') {
  // An operator runs for days: node restarts at once, in this process, with
  // V8's young generation bounded (ADR 0026) — before the commands load.
  const { boundYoungGeneration } = await import('../host/young-generation.js');
  boundYoungGeneration({ script: fileURLToPath(import.meta.url), args });
}
const { dispatch } = await import('./dispatch.js');

let interrupt: AbortController | undefined;

const exit = await dispatch(args, {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  interrupted() {
    if (interrupt === undefined) {
      const controller = (interrupt = new AbortController());
      for (const signal of ['SIGINT', 'SIGTERM'] as const)
        process.once(signal, () => {
          controller.abort();
        });
    }
    return interrupt.signal;
  },
});

if (exit !== 'running') {
  // A finished command ends the process even if a client left a keep-alive
  // socket open (replay's apiserver clients do), once what it wrote is out.
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      stream.write('', () => {
        resolve();
      });
    });
  await flushed(process.stdout);
  await flushed(process.stderr);
  process.exit(exit);
}
