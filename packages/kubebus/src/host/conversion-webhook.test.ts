import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { createLogger, Registry, type Listening } from '@kubebus/shared/obs';
import { Thermostat } from '../testing/thermostat-fixture.js';
import { startConversionWebhook } from './conversion-webhook.js';

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
});
