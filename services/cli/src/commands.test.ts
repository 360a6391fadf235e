import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { USAGE, readCommandLine } from './commands.js';

describe('bus command line', () => {
  it('prints only the named command on --help', () => {
    const result = readCommandLine(['dlq', 'list', '--help']);
    assert.equal(result.kind, 'help');
    if (result.kind !== 'help') return;
    assert.match(result.text, /^usage: kubebus dlq list \[--origin/);
    assert.doesNotMatch(result.text, /kubebus history/);
    assert.equal(result.exitCode, 0);
  });

  it('prints every command without one', () => {
    assert.deepEqual(readCommandLine([]), { kind: 'help', text: USAGE, exitCode: 2 });
  });

  it('refuses an option the command does not take, naming the command', () => {
    const result = readCommandLine(['lag', '--origin', 'x']);
    assert.deepEqual(result, {
      kind: 'error',
      message: 'kubebus lag takes no --origin (kubebus lag --help lists its options)',
    });
  });

  it('refuses unknown options and missing values in one line', () => {
    for (const args of [
      ['dlq', 'list', '--bogus'],
      ['dlq', 'list', '--origin'],
    ]) {
      const result = readCommandLine(args);
      assert.equal(result.kind, 'error');
      if (result.kind === 'error') assert.doesNotMatch(result.message, /\n/);
    }
  });

  it('accepts the connection options and the command’s own', () => {
    const result = readCommandLine([
      'dlq',
      'redrive',
      '--all',
      '--code',
      'X',
      '-s',
      'nats://h:1',
      '-o',
      'json',
    ]);
    assert.equal(result.kind, 'run');
    if (result.kind === 'run') assert.equal(result.command, 'dlq redrive');
  });

  it('names an unknown command', () => {
    assert.deepEqual(readCommandLine(['histroy', 'x']), {
      kind: 'error',
      message: 'unknown command "histroy x" (kubebus --help lists the commands)',
    });
  });
});
