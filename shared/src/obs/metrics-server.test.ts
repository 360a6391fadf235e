import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { describe, it } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { createLogger } from './logger.js';
import { accessFunc, type AccessDecision } from './metrics-access.js';
import { startSecureMetricsServer } from './metrics-server.js';
import { selfSignedCertificate } from './self-signed-certificate.js';

const log = createLogger({ service: 'test', level: 'error' });

function get(port: number, path: string, token?: string, method = 'GET') {
  return new Promise<{
    status: number;
    body: string;
    headers: Record<string, unknown>;
    cn: string;
  }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        rejectUnauthorized: false,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        const cn = (res.socket as TLSSocket).getPeerCertificate().subject?.CN;
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            body,
            headers: res.headers,
            cn: (Array.isArray(cn) ? cn[0] : cn) ?? '',
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('startSecureMetricsServer', () => {
  const registry = new Registry();
  new Counter({ name: 'kubebus_test_total', help: 'h', registers: [registry] }).inc();
  const decide = (token: string | undefined): AccessDecision =>
    token === 'Bearer reader'
      ? { ok: true, user: 'reader' }
      : token === 'Bearer other'
        ? { ok: false, status: 403, reason: 'other may not get /metrics' }
        : { ok: false, status: 401, reason: 'a bearer token is required' };
  const access = accessFunc((authorization) => Promise.resolve(decide(authorization)));

  it('serves GET /metrics over HTTPS to whom the access check lets through, and nothing else', async () => {
    const server = await startSecureMetricsServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      access,
      log,
    });
    try {
      const anonymous = await get(server.port, '/metrics');
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers['www-authenticate'], 'Bearer');
      assert.equal(anonymous.cn, 'kubebus-metrics', 'self-signed, made at start');
      assert.equal((await get(server.port, '/metrics', 'other')).status, 403);
      const served = await get(server.port, '/metrics', 'reader');
      assert.equal(served.status, 200);
      assert.match(served.body, /^kubebus_test_total 1$/m);
      assert.equal((await get(server.port, '/healthz', 'reader')).status, 404);
      assert.equal((await get(server.port, '/metrics', 'reader', 'POST')).status, 405);
    } finally {
      await server.close();
    }
  });

  it('serves a mounted certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubebus-metrics-cert-'));
    const mounted = selfSignedCertificate({ commonName: 'mounted', hosts: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), mounted.cert);
    writeFileSync(join(dir, 'tls.key'), mounted.key);
    const tls = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const server = await startSecureMetricsServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      access,
      log,
      tls,
    });
    try {
      assert.equal((await get(server.port, '/metrics')).cn, 'mounted');
    } finally {
      await server.close();
    }
  });
});
