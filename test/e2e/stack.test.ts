// `npm start`, run as a newcomer would: the loopback stack comes up, the sample
// DatabaseCluster reaches Ready, and Ctrl-C stops every process it started.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../support/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('npm start', { timeout: 300_000 }, () => {
  it('brings the sample DatabaseCluster to Ready and stops cleanly on Ctrl-C', async () => {
    const stack = spawn('npm', ['start'], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    stack.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    stack.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(stack, 'exit');
    try {
      await waitFor(() => output.includes('is Ready.'), 'the sample to be Ready', 240_000).catch(
        (error: unknown) => {
          throw new Error(`npm start said:\n${output}`, { cause: error });
        },
      );
      assert.match(output, /export KUBECONFIG=\S+kubeconfig/);
      const nats = /NATS: tls:\/\/127\.0\.0\.1:(\d+), CA \S+ca\.crt/.exec(output);
      assert.ok(nats, output);
      assert.equal(await listening(Number(nats[1])), true);

      process.kill(-(stack.pid ?? 0), 'SIGINT');
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      // npm itself dies of the SIGINT; the stack it runs must exit cleanly.
      assert.ok(
        code === 0 || signal === 'SIGINT',
        `exit ${String(code)} ${String(signal)}\n${output}`,
      );
      assert.doesNotMatch(output, /the stack failed|unclean/);
      assert.match(output, /stopped\./);
      assert.equal(await listening(Number(nats[1])), false, 'nats-server is still running');
    } finally {
      try {
        process.kill(-(stack.pid ?? 0), 'SIGKILL');
      } catch {
        // already gone
      }
      const dir = /Logs and data stay in (\S+)/.exec(output)?.[1];
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });
});
