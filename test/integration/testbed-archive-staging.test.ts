// Staging folders an interrupted download left behind are removed by the next
// download of the same archive; those of a download still running are not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeStaging, releaseStaging, STALE_AFTER_MS } from '../bed/archive-staging.js';

const NAME = 'nats-server-v2.15.2-linux-amd64';

/** A staging folder as install() leaves it, with a partial download in it. */
function leftover(parent: string, suffix: string, owner?: string): string {
  const dir = join(parent, `.${NAME}-${suffix}`);
  mkdirSync(dir);
  writeFileSync(join(dir, `.download-${NAME}.tar.gz`), 'the first megabytes');
  if (owner !== undefined) writeFileSync(join(dir, '.owner'), owner);
  return dir;
}

/** The pid of a process that has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

describe('test bed download staging', () => {
  it('removes the folders of ended owners and old ownerless ones, keeping live ones and others', () => {
    const parent = mkdtempSync(join(tmpdir(), 'kubebus-archives-'));
    leftover(parent, 'killed', `${endedPid()} ${hostname()}\n`);
    leftover(parent, 'living', `${process.pid} ${hostname()}\n`);
    const old = leftover(parent, 'anolds');
    const hourAgo = (Date.now() - STALE_AFTER_MS - 60_000) / 1000;
    utimesSync(old, hourAgo, hourAgo);
    leftover(parent, 'fresh1'); // ownerless but new: its owner may be writing .owner now
    leftover(parent, 'remote', `${process.pid} another-machine\n`); // cannot ask: by age, new
    mkdirSync(join(parent, NAME)); // a finished download
    mkdirSync(join(parent, `.nats-server-v2.14.0-linux-amd64-killed`)); // another archive's

    const staging = makeStaging(parent, NAME);

    const left = readdirSync(parent).sort();
    assert.deepEqual(
      left.filter((entry) => entry !== staging.slice(parent.length + 1)),
      [
        `.${NAME}-fresh1`,
        `.${NAME}-living`,
        `.${NAME}-remote`,
        '.nats-server-v2.14.0-linux-amd64-killed',
        NAME,
      ].sort(),
    );
    // the new folder says who owns it, and gives that up before its rename
    assert.equal(readFileSync(join(staging, '.owner'), 'utf8'), `${process.pid} ${hostname()}\n`);
    releaseStaging(staging);
    assert.deepEqual(readdirSync(staging), []);
  });
});
