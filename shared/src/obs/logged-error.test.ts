import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { get } from 'node:http';
import { describe, it } from 'node:test';
import { apiErrorFrom } from '../kube/api-error.js';
import { createLogger } from './logger.js';

/** A logger as production makes it, its lines parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    service: 'test',
    level: 'debug',
    destination: {
      write(chunk: string) {
        lines.push(JSON.parse(chunk) as Record<string, unknown>);
      },
    },
  });
  return { log, lines };
}

const listening = (server: Server) =>
  new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });

/** Node's own error for a connection to a port nothing listens on. */
async function connectionRefused(): Promise<Error> {
  const server = createServer();
  const port = await listening(server);
  await new Promise((resolve) => server.close(resolve));
  return new Promise((resolve) => {
    connect(port, '127.0.0.1').on('error', resolve);
  });
}

/** Node's own error for a request whose connection the server drops. */
async function connectionReset(): Promise<Error> {
  const server = createServer((socket) => socket.resetAndDestroy());
  const port = await listening(server);
  try {
    return await new Promise((resolve) => {
      get({ host: '127.0.0.1', port }).on('error', resolve);
    });
  } finally {
    server.close();
  }
}

const throttled = () =>
  apiErrorFrom(
    429,
    JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'too many requests' }),
    { 'retry-after': '1' },
  );

describe('an error in a log line', () => {
  it('is one line without a stack when the apiserver throttles (429)', () => {
    const { log, lines } = capture();
    log.warn({ err: throttled(), retryInMs: 500 }, 'a dependency is unavailable');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.['level'], 'warn');
    assert.deepEqual(lines[0]?.['err'], {
      type: 'KubeApiError',
      class: 'transient',
      status: 429,
      reason: 'TooManyRequests',
      code: 'KUBEBUS_KUBE_API',
      message: 'apiserver answered 429 TooManyRequests: too many requests',
    });
    assert.equal(lines[0]?.['retryInMs'], 500);
  });

  it('is one line when a refused connection is retried, its stack kept when it is a fault', async () => {
    const { log, lines } = capture();
    const refused = await connectionRefused();
    // through a child, as the runtime logs each reconcile
    const child = log.child({ reconcileID: 'r1' });
    child.warn({ err: refused }, 'resync failed; will retry');
    child.error({ err: refused }, 'partition consumer stopped');
    assert.equal(lines[0]?.['level'], 'warn');
    assert.equal(lines[0]?.['reconcileID'], 'r1');
    assert.equal(lines[0]?.['msg'], 'resync failed; will retry');
    const err = lines[0]?.['err'] as Record<string, unknown>;
    assert.equal(err['class'], 'transient');
    assert.equal(err['code'], 'ECONNREFUSED');
    assert.match(String(err['message']), /ECONNREFUSED 127\.0\.0\.1/);
    assert.equal(err['stack'], undefined);
    // the caller's level stands, and a fault keeps its stack
    assert.equal(lines[1]?.['level'], 'error');
    assert.match(String((lines[1]?.['err'] as Record<string, unknown>)['stack']), /\n\s+at /);
  });

  it('is one line when a reset connection is the first argument', async () => {
    const { log, lines } = capture();
    log.warn(await connectionReset());
    assert.equal(lines[0]?.['level'], 'warn');
    const err = lines[0]?.['err'] as Record<string, unknown>;
    assert.equal(err['code'], 'ECONNRESET');
    assert.equal(err['stack'], undefined);
    assert.equal(lines[0]?.['msg'], err['message']);
  });

  it("names the status of a transient cause, and an AggregateError's reasons", () => {
    const { log, lines } = capture();
    const unavailable = apiErrorFrom(503, 'apiserver is shutting down', {});
    log.warn({ err: new Error('listing failed', { cause: unavailable }) }, 'retrying');
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const both = Object.assign(
      new AggregateError([refused('::1:6443'), refused('127.0.0.1:6443')]),
      {
        code: 'ECONNREFUSED',
      },
    );
    log.warn({ err: both }, 'retrying');
    assert.deepEqual(lines[0]?.['err'], {
      type: 'Error',
      class: 'transient',
      status: 503,
      message: 'listing failed: apiserver answered 503: apiserver is shutting down',
    });
    assert.deepEqual(lines[1]?.['err'], {
      type: 'AggregateError',
      class: 'transient',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED ::1:6443; connect ECONNREFUSED 127.0.0.1:6443',
    });
  });

  it('keeps its stack and its level when it is not expected', () => {
    const { log, lines } = capture();
    log.error({ err: new TypeError('x is undefined') }, 'reconcile failed; will retry');
    log.error({ err: apiErrorFrom(422, 'spec.port: Invalid value', {}) }, 'refused');
    assert.equal(lines[0]?.['level'], 'error');
    const err = lines[0]?.['err'] as Record<string, unknown>;
    assert.equal(err['type'], 'TypeError');
    assert.match(String(err['stack']), /TypeError: x is undefined\n\s+at /);
    assert.equal(lines[1]?.['level'], 'error');
    assert.match(String((lines[1]?.['err'] as Record<string, unknown>)['stack']), /\n\s+at /);
  });

  it("writes no URL credentials or request headers an HTTP client's error carries", async () => {
    const { log, lines } = capture();
    // gaxios' and node-fetch's shape: the URL in the message, the request on the error
    const leaky = Object.assign(
      new Error('request to https://api.example.com/v1/bill?api_key=S3CRET failed', {
        cause: new Error('upstream https://svc:pa55@billing.internal/ refused'),
      }),
      { config: { headers: { Authorization: 'Bearer abcdef0123456' } } },
    );
    log.error({ err: leaky }, 'reconcile failed');
    // and an expected failure's one line
    const refused = Object.assign(await connectionRefused(), {
      message: 'connect ECONNREFUSED https://svc:pa55@billing.internal/?key=S3CRET',
    });
    log.warn({ err: refused }, 'retrying');
    const written = JSON.stringify(lines);
    assert.doesNotMatch(written, /S3CRET|pa55|abcdef0123456/, written);
    assert.match(written, /bill\?\[redacted\] failed/);
    assert.match(String((lines[0]?.['err'] as Record<string, unknown>)['stack']), /\n\s+at /);
  });

  it('writes no credentials a line quotes in a URL, at any level', () => {
    const { log, lines } = capture();
    log.warn(
      { retryInMs: 500 },
      'cannot reach NATS at nats://alice:hunter2-SECRET@127.0.0.1:1: refused (retrying)',
    );
    log.error('TLS with NATS at tls://bob:pa55@nats:4222 failed');
    const written = JSON.stringify(lines);
    assert.doesNotMatch(written, /hunter2|pa55/, written);
    assert.match(
      String(lines[0]?.['msg']),
      /^cannot reach NATS at nats:\/\/\[redacted\]@127\.0\.0\.1:1/,
    );
    assert.equal(lines[0]?.['retryInMs'], 500);
  });

  it('leaves a fatal line fatal, with its stack', () => {
    const { log, lines } = capture();
    log.fatal({ err: throttled() }, 'watch loop crashed');
    assert.equal(lines[0]?.['level'], 'fatal');
    assert.match(String((lines[0]?.['err'] as Record<string, unknown>)['stack']), /\n\s+at /);
  });

  it('does not throw on an error whose inner errors hold it', () => {
    const { log, lines } = capture();
    const loop = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
    loop.errors.push(loop);
    log.warn({ err: loop }, 'retrying');
    assert.equal(lines.length, 1);
  });
});
