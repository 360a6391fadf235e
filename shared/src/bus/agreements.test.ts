// What a process says when the interests registered before it differ from its
// own: another primary kind under one name is a warning (two operators sharing
// a name); another version of the same kind, or other owned kinds, is an
// upgrade (info). A fake bucket: only what `agree` reads and writes.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import type { KV } from '@nats-io/kv';
import { createLogger } from '../obs/logger.js';
import { agree } from './agreements.js';

function bucketWith(registered: object) {
  const entry = { operation: 'PUT', revision: 1, json: () => registered };
  return {
    get: () => Promise.resolve(entry),
    put: () => Promise.resolve(2),
    update: () => Promise.resolve(2),
  } as unknown as KV;
}

async function linesOf(registeredFor: string, ourFor: string) {
  const lines: { level: string; msg: string }[] = [];
  const log = createLogger({
    service: 'test',
    destination: new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        const line = JSON.parse(chunk.toString()) as { level: string; msg: string };
        lines.push({ level: line.level, msg: line.msg });
        done();
      },
    }),
  });
  await agree(
    bucketWith({
      partitions: 4,
      for: registeredFor,
      registeredBy: 'r-1',
      at: '2026-12-07T10:00:00Z',
    }),
    'op.work',
    { partitions: 4, for: ourFor, registeredBy: 'r-2' },
    log,
  );
  return lines;
}

it('warns of another primary kind under the name, not of another version of the same kind', async () => {
  const upgraded = await linesOf(
    'backuppolicies.v1alpha1.backup.example.com',
    'backuppolicies.v1.backup.example.com',
  );
  assert.deepEqual(
    upgraded.map(({ level }) => level),
    ['info'],
  );
  assert.match(upgraded[0]?.msg ?? '', /another version of its kind .* \(an upgrade\)/);
  const other = await linesOf(
    'backuppolicies.v1.backup.example.com',
    'restores.v1.backup.example.com',
  );
  assert.deepEqual(
    other.map(({ level }) => level),
    ['warn'],
  );
  assert.match(other[0]?.msg ?? '', /two operators sharing a name/);
});
