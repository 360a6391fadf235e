import assert from 'node:assert/strict';
import { createServer, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { request } from 'node:https';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import { after, before, describe, it } from 'node:test';
import { createLogger, Registry, type Listening } from '@kubebus/shared/obs';
import { Thermostat } from '../testing/thermostat-fixture.js';
import { conversionHandler, startConversionWebhook } from './conversion-webhook.js';

/** A POST of /convert to the loopback webhook (its certificate is self-made). */
const convertAt = (port: number) =>
  ({
    host: '127.0.0.1',
    port,
    path: '/convert',
    method: 'POST',
    rejectUnauthorized: false,
  }) as const;

const log = createLogger({ service: 'test', level: 'error' });

function call(port: number, path: string, method: string, body?: string) {
  return new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, rejectUnauthorized: false },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            type: res.headers['content-type'] ?? '',
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: {
    uid: 'r-9',
    desiredAPIVersion: 'test.kubebus.dev/v1',
    objects: [
      {
        apiVersion: 'test.kubebus.dev/v1alpha1',
        kind: 'Thermostat',
        metadata: { name: 'a', namespace: 'b' },
        spec: { celsius: 3 },
      },
    ],
  },
});

/** A gauge of the webhook's turns, now. */
async function gauge(registry: Registry, name: string): Promise<number> {
  const text = await registry.getSingleMetricAsString(name);
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
}

/** A gauge of the webhook's turns, read until it shows `value` or more (`atLeast`) (bounded: a loaded machine is slow). */
async function untilGauge(
  registry: Registry,
  name: string,
  value: number,
  { atLeast = false } = {},
): Promise<void> {
  const deadline = Date.now() + 30_000;
  let seen = Number.NaN;
  while (Date.now() < deadline) {
    const text = await registry.getSingleMetricAsString(name);
    seen = Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    if (seen === value || (atLeast && seen > value)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail(`${name} stayed ${String(seen)}, not ${atLeast ? 'at least ' : ''}${String(value)}`);
}

describe('the conversion webhook over HTTPS', () => {
  let server: Listening;
  const registry = new Registry();
  before(async () => {
    server = await startConversionWebhook({
      host: '127.0.0.1',
      port: 0,
      resources: [Thermostat],
      log,
      maxBytes: 4096,
      registry,
      turnWaitMs: 200,
    });
  });
  after(() => server.close());

  it('answers a ConversionReview posted to /convert with JSON', async () => {
    const answer = await call(server.port, '/convert', 'POST', review);
    assert.equal(answer.status, 200);
    assert.equal(answer.type, 'application/json');
    const parsed = JSON.parse(answer.body) as {
      response: { uid: string; result: unknown; convertedObjects: { spec: unknown }[] };
    };
    assert.equal(parsed.response.uid, 'r-9');
    assert.deepEqual(parsed.response.result, { status: 'Success' });
    assert.deepEqual(parsed.response.convertedObjects[0]?.spec, {
      target: { value: 3, unit: 'C' },
    });
  });

  it('refuses other paths, methods, bodies that are not reviews and bodies too large, in one line', async () => {
    const cases: [string, string, string | undefined, number, RegExp][] = [
      ['/metrics', 'POST', review, 404, /^not found: the conversion webhook is \/convert\n$/],
      ['/convert', 'GET', undefined, 405, /^method not allowed/],
      ['/convert', 'POST', '{not json', 400, /^not a ConversionReview: the body is not JSON\n$/],
      [
        '/convert',
        'POST',
        '{"kind":"AdmissionReview"}',
        400,
        /^not a ConversionReview: apiVersion/,
      ],
      [
        '/convert',
        'POST',
        'x'.repeat(5000),
        413,
        /^a ConversionReview may not exceed 4096 bytes\n$/,
      ],
    ];
    for (const [path, method, body, status, text] of cases) {
      const answer = await call(server.port, path, method, body);
      assert.equal(answer.status, status, `${method} ${path}`);
      assert.match(answer.body, text);
      assert.equal(answer.body.trim().split('\n').length, 1);
    }
    // still serving
    assert.equal((await call(server.port, '/convert', 'POST', review)).status, 200);
    const counted = await registry.getSingleMetricAsString('kubebus_conversion_reviews_total');
    assert.match(counted, /result="refused"} 3/);
    assert.match(counted, /result="success"} 2/);
  });

  it('answers 413 to a chunked body past the limit before closing', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(convertAt(server.port), (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text });
        });
      });
      req.on('error', reject);
      // no content-length: chunked, and more than the limit
      for (let i = 0; i < 8; i++) req.write('x'.repeat(1024));
      req.end();
    });
    assert.equal(answer.status, 413);
    assert.match(answer.body, /^a ConversionReview may not exceed 4096 bytes\n$/);
  });

  it('answers 503 with Retry-After beyond two reviews in flight and a short wait', async () => {
    const held: ClientRequest[] = [];
    const heldDone: Promise<number>[] = [];
    for (let i = 0; i < 2; i++) {
      const req = request(convertAt(server.port));
      heldDone.push(
        new Promise((resolve, reject) => {
          req.on('response', (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
        }),
      );
      req.flushHeaders();
      req.write(review.slice(0, 10));
      held.push(req);
    }
    const another = () =>
      new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
        const req = request(convertAt(server.port), (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] });
        });
        req.on('error', reject);
        req.end(review);
      });
    // until the two are being read (a loaded machine may take a while): then a third is refused
    const deadline = Date.now() + 30_000;
    let third = await another();
    while (third.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      third = await another();
    }
    assert.deepEqual(third, { status: 503, retryAfter: '1' });
    for (const req of held) req.end(review.slice(10));
    assert.deepEqual(await Promise.all(heldDone), [200, 200]);
    assert.equal((await call(server.port, '/convert', 'POST', review)).status, 200);
  });
});

describe('a conversion webhook the apiserver sends a burst', () => {
  let burst: Listening;
  const registry = new Registry();
  before(async () => {
    // a wait for a turn longer than a loaded machine takes to connect them all
    burst = await startConversionWebhook({
      host: '127.0.0.1',
      port: 0,
      resources: [Thermostat],
      log,
      registry,
      turnWaitMs: 30_000,
    });
  });
  after(() => burst.close());

  it('answers a burst of reviews side by side, each in its turn, none refused', async () => {
    // the apiserver converts for each write and each watcher of another version at once; a
    // list's review spans many packets: every head is in before any body is
    const sent = Array.from({ length: 8 }, () => {
      const req = request(convertAt(burst.port));
      const status = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
      });
      req.flushHeaders();
      return { req, status };
    });
    // every head has reached the webhook (each is in flight or waiting for its turn)
    await untilGauge(registry, 'kubebus_conversion_reviews_waiting', 6);
    for (const { req } of sent) req.end(review);
    assert.deepEqual(
      await Promise.all(sent.map(({ status }) => status)),
      sent.map(() => 200),
    );
  });
});

describe('a conversion webhook whose waiting connections drop', () => {
  const registry = new Registry();
  let server: Server;
  let port = 0;
  before(async () => {
    const handler = conversionHandler({
      host: '127.0.0.1',
      port: 0,
      resources: [Thermostat],
      log,
      registry,
      bodyDeadlineMs: 30_000,
      turnWaitMs: 30_000,
    });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    socket.resume();
    return socket;
  };
  const whole = `POST /convert HTTP/1.1\r\nHost: x\r\nContent-Length: ${String(Buffer.byteLength(review))}\r\n\r\n${review}`;

  it('gives every turn back, pipelined reviews that waited on a dropped connection too', async () => {
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.name);
    process.on('warning', warned);
    try {
      for (let round = 0; round < 2; round++) {
        // the peer's two turns held by bodies that do not come (cut only at 30 s)…
        const holders = [await open(), await open()];
        for (const holder of holders)
          holder.write('POST /convert HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n');
        await untilGauge(registry, 'kubebus_conversion_reviews_in_flight', 2);
        // …fifteen reviews sent back to back on one connection wait, and it drops
        const pipelined = await open();
        pipelined.write(whole.repeat(15));
        await untilGauge(registry, 'kubebus_conversion_reviews_waiting', 1, { atLeast: true });
        pipelined.destroy();
        // a waiter whose connection is gone leaves the queue at once, not when a turn frees
        await untilGauge(registry, 'kubebus_conversion_reviews_waiting', 0);
        assert.equal(await gauge(registry, 'kubebus_conversion_reviews_in_flight'), 2);
        // and the holders' turns come back when their connections drop
        for (const holder of holders) holder.destroy();
        await untilGauge(registry, 'kubebus_conversion_reviews_in_flight', 0);
      }
    } finally {
      process.off('warning', warned);
    }
    // one listener per connection, however many reviews wait on it
    assert.deepEqual(warnings, []);
    const fresh = await open();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      fresh.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\r\n')) resolve(text.split('\r\n')[0] ?? '');
      });
      fresh.write(whole);
    });
    fresh.destroy();
    assert.equal(answer, 'HTTP/1.1 200 OK');
  });
});

describe('a conversion webhook that slow senders try to hold', () => {
  let server: Listening;
  before(async () => {
    server = await startConversionWebhook({
      host: '127.0.0.1',
      port: 0,
      resources: [Thermostat],
      log,
      maxBytes: 4096,
      bodyDeadlineMs: 1_000,
      turnWaitMs: 200,
    });
  });
  after(() => server.close());

  /** A review whose head is sent and whose body never comes, from `localAddress`. */
  const held = (localAddress: string) => {
    const req = request({
      ...convertAt(server.port),
      localAddress,
      headers: { 'content-length': '500' },
    });
    const answered = new Promise<number>((resolve) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => {
        resolve(0);
      });
    });
    req.flushHeaders();
    req.write(review.slice(0, 10));
    return answered;
  };

  it("keeps the apiserver's turn while another peer holds its own, and cuts a body that never comes", async () => {
    // another pod of the cluster (127.0.0.2 on loopback) holds two reviews open
    const slow = [held('127.0.0.2'), held('127.0.0.2')];
    // once both are being read, a third from it waits its turn…
    let third = 200;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      third = await new Promise<number>((resolve, reject) => {
        const req = request({ ...convertAt(server.port), localAddress: '127.0.0.2' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(review);
      });
      if (third === 503) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(third, 503);
    // …the apiserver's (127.0.0.1) is answered meanwhile
    assert.equal((await call(server.port, '/convert', 'POST', review)).status, 200);
    // and the bodies that never come are cut at the deadline, not held for minutes
    assert.deepEqual(await Promise.all(slow), [408, 408]);
  });
});

describe('a conversion webhook whose conversion answers what JSON cannot say', () => {
  let server: Listening;
  before(async () => {
    const Big = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Thermostat',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({ celsius: z.int() }), status: z.object({}) },
        v1: { spec: z.object({ celsius: z.unknown() }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { celsius: BigInt(spec.celsius ?? 0) } }),
          fromStorage: () => ({ spec: { celsius: 0 } }),
        },
      },
    });
    server = await startConversionWebhook({
      host: '127.0.0.1',
      port: 0,
      resources: [Big],
      log,
    });
  });
  after(() => server.close());

  it('answers 500 in one line and goes on serving', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await call(server.port, '/convert', 'POST', review);
      assert.equal(answer.status, 500);
      assert.match(answer.body, /^the conversion webhook failed: .*BigInt.*\n$/);
    }
  });
});
