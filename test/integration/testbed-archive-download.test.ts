// Downloads follow redirects one hop at a time, each hop held to the same rule
// as the first URL: https, or plain http only on this machine, never a
// downgrade from https. A loopback host plays the mirror; 127.0.0.2 (loopback
// too, but not an address the rule trusts) plays a plain-http host elsewhere.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { download, fetchText, redirectTarget } from '../bed/archive-download.js';
import { isArchiveError } from '../bed/archive-error.js';

const BYTES = 'the archive bytes';

describe('test bed downloads and redirects', () => {
  let server: Server;
  let base: string;
  let port: number;
  const asked: string[] = [];

  before(async () => {
    server = createServer((request, response) => {
      const path = request.url ?? '/';
      asked.push(`${request.headers.host ?? ''}${path}`);
      const redirect = (location: string) => response.writeHead(302, { location }).end();
      if (path === '/archive') response.writeHead(200).end(BYTES);
      else if (path === '/relative') redirect('/archive');
      else if (path === '/to-localhost') redirect(`http://localhost:${port}/archive`);
      else if (path === '/to-plain-elsewhere') redirect(`http://127.0.0.2:${port}/archive`);
      else if (path === '/to-file') redirect('file:///etc/passwd');
      else if (path === '/loop') redirect('/loop');
      else response.writeHead(404).end();
    });
    // every address, so that 127.0.0.2 would answer were it asked
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('follows redirects that stay safe, relative ones included', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kubebus-dl-')), 'file');
    const digest = await download(`${base}/relative`, out, 'sha256');
    assert.equal(readFileSync(out, 'utf8'), BYTES);
    assert.equal(digest, createHash('sha256').update(BYTES).digest('hex'));
    assert.equal(await fetchText(`${base}/to-localhost`), BYTES);
  });

  it('refuses a redirect to plain http off this machine in one line, and never asks it', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kubebus-dl-')), 'file');
    asked.length = 0;
    await assert.rejects(
      download(`${base}/to-plain-elsewhere`, out, 'sha256'),
      (error: unknown) =>
        isArchiveError(error) &&
        error.code === 'refused' &&
        !error.message.includes('\n') &&
        error.message ===
          `${base}/to-plain-elsewhere redirects to http://127.0.0.2:${port}/archive, which is not https (plain http only on loopback): fix the mirror, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
    assert.deepEqual(asked, [`127.0.0.1:${port}/to-plain-elsewhere`]);
    assert.equal(existsSync(out), false);
    await assert.rejects(
      fetchText(`${base}/to-file`),
      (error: unknown) =>
        isArchiveError(error) &&
        error.code === 'refused' &&
        /redirects to file:\/\/\/etc\/passwd, which is not https/.test(error.message),
    );
  });

  it('gives up on a redirect loop after a few hops', async () => {
    asked.length = 0;
    await assert.rejects(
      fetchText(`${base}/loop`),
      (error: unknown) =>
        isArchiveError(error) &&
        error.code === 'refused' &&
        error.message ===
          `${base}/loop redirects more than 5 times: fix the mirror, or set KUBEBUS_NO_DOWNLOAD=1`,
    );
    assert.equal(asked.length, 6);
  });

  it('never lets https fall back to plain http, even to this machine', () => {
    const from = new URL('https://mirror.example/envtest/archive.tar.gz');
    assert.equal(
      redirectTarget(from, 'https://objects.example/a?sig=1').href,
      'https://objects.example/a?sig=1',
    );
    assert.throws(
      () => redirectTarget(from, 'http://127.0.0.1:8080/archive.tar.gz'),
      (error: unknown) => isArchiveError(error) && error.code === 'refused',
    );
    assert.throws(() => redirectTarget(from, null), /redirects to nowhere/);
  });
});
