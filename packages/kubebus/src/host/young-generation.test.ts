import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { test } from 'node:test';
import {
  boundYoungGeneration,
  leastOwnSemiSpaceMb,
  restartArguments,
  YoungGenerationEnv,
  type NodeState,
} from './young-generation.js';

const COMMAND = { script: '/app/kubebus.js', args: ['run', 'op.js'] };
const GiB = 2 ** 30;
/** node on a large host: V8 would give itself 32 MB semi-spaces at least */
const LARGE: NodeState = {
  execArgv: [],
  nodeOptions: undefined,
  heapLimitBytes: 4 * GiB,
  supervised: false,
};

test('restarts with the bound before the arguments node and the script were given', () => {
  assert.deepEqual(restartArguments(8, { ...LARGE, execArgv: ['--import', 'tsx'] }, COMMAND), [
    '--max-semi-space-size=8',
    '--import',
    'tsx',
    '/app/kubebus.js',
    'run',
    'op.js',
  ]);
});

test('does not restart for 0, nor when node was given a semi-space size, nor after its own restart', () => {
  const given = (execArgv: string[], nodeOptions?: string) =>
    restartArguments(8, { ...LARGE, execArgv, nodeOptions }, COMMAND);
  assert.equal(restartArguments(0, LARGE, COMMAND), undefined);
  assert.equal(given(['--max-semi-space-size=32']), undefined);
  assert.equal(given(['--max_semi_space_size=32']), undefined);
  assert.equal(given([], '--enable-source-maps --max-semi-space-size=4'), undefined);
  assert.equal(given([], '"--max-semi-space-size=4"'), undefined);
  const restarted = restartArguments(8, LARGE, COMMAND) ?? [];
  assert.equal(given(restarted.slice(0, 1)), undefined);
  // a flag that only starts alike is not it
  assert.notEqual(given(['--max-semi-space-size-x=1']), undefined);
});

test('does not grow what V8 would keep smaller: a process with little memory is left alone', () => {
  // V8's own semi-space is at least 1/128 of the heap limit (node 22; more on 24 and 26)
  assert.equal(leastOwnSemiSpaceMb(4 * GiB), 32);
  // a pod limited to 512 MiB: node's heap limit ~259 MB, V8's semi-spaces 1–5 MB
  assert.equal(
    restartArguments(8, { ...LARGE, heapLimitBytes: 259 * 2 ** 20 }, COMMAND),
    undefined,
  );
  assert.equal(restartArguments(8, { ...LARGE, heapLimitBytes: GiB }, COMMAND), undefined);
  assert.notEqual(restartArguments(8, { ...LARGE, heapLimitBytes: 1.1 * GiB }, COMMAND), undefined);
});

test('does not restart a process a parent talks to over IPC (a fork, node --watch)', () => {
  assert.equal(restartArguments(8, { ...LARGE, supervised: true }, COMMAND), undefined);
});

test('the variable defaults to 8 and refuses what is no size', () => {
  assert.equal(YoungGenerationEnv.parse({}).KUBEBUS_MAX_SEMI_SPACE_MB, 8);
  for (const bad of ['-1', '257', '1.5', 'lots'])
    assert.equal(
      YoungGenerationEnv.safeParse({ KUBEBUS_MAX_SEMI_SPACE_MB: bad }).success,
      false,
      bad,
    );
});

test('starts nothing where node cannot or may not replace itself, and runs on where it refuses', () => {
  const started: string[][] = [];
  const execve = (file: string, args: readonly string[]): never => {
    started.push([file, ...args]);
    throw new Error('ERR_FEATURE_UNAVAILABLE_ON_PLATFORM');
  };
  const linux = { execPath: '/usr/bin/node', execArgv: [], platform: 'linux' as const, env: {} };
  const bound = (proc: Parameters<typeof boundYoungGeneration>[1]) => {
    boundYoungGeneration(COMMAND, proc, 4 * GiB);
  };
  bound({ ...linux, env: { KUBEBUS_MAX_SEMI_SPACE_MB: 'lots' }, execve });
  bound(linux);
  bound({ ...linux, platform: 'win32', execve });
  bound({ ...linux, permission: { has: () => false }, execve });
  bound({ ...linux, channel: {}, execve });
  bound({ ...linux, env: { WATCH_REPORT_DEPENDENCIES: '1' }, execve });
  assert.deepEqual(started, []);
  // refused: no throw, the command goes on
  bound({ ...linux, execve });
  assert.deepEqual(started, [
    [
      '/usr/bin/node',
      '/usr/bin/node',
      '--max-semi-space-size=8',
      '/app/kubebus.js',
      'run',
      'op.js',
    ],
  ]);
});

// The restart on the running Node line: the same pid, the arguments kept,
// and a young generation held within the bound under an allocation rate that
// grows V8's own to its maximum. Compared is the size it holds through most of
// the run (the median of its samples), not a single sample: V8 lets the new
// space exceed its semi-spaces for a moment (pages pinned by a scavenge, Node
// 26's paged new space; CI saw 18.75 MB once with 4 MB semi-spaces).
test('node restarts in the same process with the young generation bounded', async (t) => {
  const script = `
    const { getHeapSpaceStatistics } = await import('node:v8');
    const restarted = process.env.PID_BEFORE !== undefined;
    const pidBefore = process.env.PID_BEFORE ?? String(process.pid);
    process.env.PID_BEFORE = pidBefore;
    const { boundYoungGeneration } = await import(${JSON.stringify(import.meta.resolve('./young-generation.ts'))});
    boundYoungGeneration({ script: process.argv[1], args: process.argv.slice(2) });
    const live = new Map();
    const sizes = [];
    for (let i = 0; i < 600_000; i++) {
      live.set(i % 100_000, { text: 'x'.repeat(200) + i, numbers: [i, i + 1] });
      if (i % 5_000 === 0)
        sizes.push(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    const held = sizes.sort((a, b) => a - b)[Math.floor(sizes.length / 2)];
    process.stdout.write(JSON.stringify({
      restarted, pidBefore, pid: String(process.pid), held, argv: process.argv.slice(2), execArgv: process.execArgv,
    }));`;
  const dir = await mkdtemp(join(tmpdir(), 'kubebus-young-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'allocate.mjs');
  await writeFile(file, script);
  const run = async (mb: string) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), file, 'kept'],
      {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '', KUBEBUS_MAX_SEMI_SPACE_MB: mb },
      },
    );
    return JSON.parse(stdout) as {
      restarted: boolean;
      pidBefore: string;
      pid: string;
      held: number;
      argv: string[];
      execArgv: string[];
    };
  };
  const own = await run('0');
  assert.equal(own.restarted, false, 'KUBEBUS_MAX_SEMI_SPACE_MB=0 restarts nothing');
  // V8's own semi-spaces on this machine are larger than 4 MB: the bound must restart node
  assert.ok(
    leastOwnSemiSpaceMb(getHeapStatistics().heap_size_limit) > 4,
    'a machine too small for this test',
  );
  const bounded = await run('4');
  assert.equal(bounded.restarted, true, 'node restarted');
  assert.equal(bounded.pid, bounded.pidBefore, 'in the same process');
  assert.ok(bounded.execArgv.includes('--max-semi-space-size=4'), bounded.execArgv.join(' '));
  assert.deepEqual(bounded.argv, ['kept']);
  // two semi-spaces of 4 MB, and V8's rounding to pages
  assert.ok(
    bounded.held <= 10 * 2 ** 20,
    `young generation ${String(bounded.held)} bytes with 4 MB semi-spaces`,
  );
  assert.ok(
    own.held > 1.5 * bounded.held,
    `young generation ${String(own.held)} bytes with V8's own maximum, ${String(bounded.held)} bounded`,
  );
});
