// The hottest functions of V8 CPU profiles (node --cpu-prof), by self time,
// summed over every profile in a directory: what `npm run bench -- --profile
// <dir>` leaves behind, one file per kubebus process.
//   node --import tsx bench/profile-top.ts <dir> [count]
// V8 samples the main thread by wall clock: a frame is charged while the
// thread waits descheduled inside it (a socket write that wakes nats-server
// on the same core), and the collector's helper threads are not seen. For
// where CPU goes, `perf record -g -p <pid>` with `--node-flags=--perf-basic-prof`
// (docs/benchmarks.md, 2026-12-05).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

const [dir = '.', countText = '25'] = process.argv.slice(2);
const selfMs = new Map<string, number>();
let totalMs = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const ms = (profile.timeDeltas[i] ?? 0) / 1_000;
    totalMs += ms;
    if (frame === undefined) return;
    const where = frame.url
      .replace(/^.*node_modules\//, '')
      .replace(/^file:\/\/.*\/(dist|src)\//, '$1/');
    const name = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
    selfMs.set(name, (selfMs.get(name) ?? 0) + ms);
  });
}
const top = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, Number(countText));
process.stdout.write(`${(totalMs / 1_000).toFixed(1)} s sampled\n`);
for (const [name, ms] of top)
  process.stdout.write(`${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${name}\n`);
