import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from './logger.js';
import { kubernetesMetricsAccess } from './metrics-access.js';

const log = createLogger({ service: 'test', level: 'error' });

/** An apiserver's answers by token and user; counts the reviews it is asked for. */
function reviews(allowed: Record<string, boolean>) {
  const asked: string[] = [];
  const post = (path: string, body: object): Promise<unknown> => {
    const spec = (body as { spec: Record<string, unknown> }).spec;
    if (path.endsWith('/tokenreviews')) {
      asked.push('authn');
      const user = String(spec['token']).replace(/^token-/, '');
      return Promise.resolve({
        status:
          user in allowed ? { authenticated: true, user: { username: user, groups: ['g'] } } : {},
      });
    }
    asked.push('authz');
    const attributes = spec['nonResourceAttributes'] as { path: string; verb: string };
    assert.deepEqual(attributes, { path: '/metrics', verb: 'get' });
    assert.deepEqual(spec['groups'], ['g']);
    return Promise.resolve({ status: { allowed: allowed[String(spec['user'])] === true } });
  };
  return { post, asked };
}

describe('kubernetesMetricsAccess', () => {
  it('answers 401 without a bearer token, and asks the apiserver nothing', async () => {
    const { post, asked } = reviews({});
    const access = kubernetesMetricsAccess(post, log);
    for (const header of [undefined, '', 'Basic abc', 'Bearer'])
      assert.deepEqual(await access.check(header, '/metrics', 'GET'), {
        ok: false,
        status: 401,
        reason: 'a bearer token is required',
      });
    assert.deepEqual(asked, []);
  });

  it('401 for an unknown token, 403 for a user RBAC denies, ok for one it allows', async () => {
    const { post } = reviews({ reader: true, other: false });
    const access = kubernetesMetricsAccess(post, log);
    assert.equal((await access.check('Bearer nobody', '/metrics', 'GET')).ok, false);
    assert.deepEqual(await access.check('Bearer token-other', '/metrics', 'GET'), {
      ok: false,
      status: 403,
      reason: 'other may not get /metrics',
    });
    assert.deepEqual(await access.check('Bearer token-reader', '/metrics', 'GET'), {
      ok: true,
      user: 'reader',
    });
  });

  it('keeps decisions a while (allowed 5 min, denied 30 s), by a digest of the token', async () => {
    let now = 0;
    const { post, asked } = reviews({ reader: true, other: false });
    const access = kubernetesMetricsAccess(post, log, () => now);
    await access.check('Bearer token-reader', '/metrics', 'GET');
    await access.check('Bearer token-reader', '/metrics', 'GET');
    assert.deepEqual(asked, ['authn', 'authz']);
    now = 61_000; // the authentication is old, the authorization is not
    await access.check('Bearer token-reader', '/metrics', 'GET');
    assert.deepEqual(asked, ['authn', 'authz', 'authn']);
    await access.check('Bearer token-other', '/metrics', 'GET');
    now += 31_000;
    await access.check('Bearer token-other', '/metrics', 'GET');
    assert.equal(asked.filter((a) => a === 'authz').length, 3);
  });

  it('answers 503 when the apiserver cannot be asked', async () => {
    const access = kubernetesMetricsAccess(() => Promise.reject(new Error('403 forbidden')), log);
    const decision = await access.check('Bearer token-x', '/metrics', 'GET');
    assert.deepEqual(decision, {
      ok: false,
      status: 503,
      reason: 'the request cannot be verified now',
    });
  });

  it('answers 503 while 16 reviews wait on the apiserver, and reviews again once they end', async () => {
    const waiting: Array<() => void> = [];
    let asked = 0;
    let held = true;
    const post = (path: string): Promise<unknown> => {
      asked++;
      if (path.endsWith('/tokenreviews') && held)
        return new Promise((resolve) => {
          waiting.push(() => {
            resolve({});
          });
        });
      return Promise.resolve({ status: { allowed: true } });
    };
    const access = kubernetesMetricsAccess(post, log);
    const pending = Array.from({ length: 16 }, (_, index) =>
      access.check(`Bearer made-up-${index}`, '/metrics', 'GET'),
    );
    assert.deepEqual(await access.check('Bearer one-more', '/metrics', 'GET'), {
      ok: false,
      status: 503,
      reason: 'too many requests are being verified: retry',
    });
    assert.equal(asked, 16);
    held = false;
    for (const release of waiting) release();
    for (const decision of await Promise.all(pending)) assert.equal(decision.ok, false);
    await access.check('Bearer one-more', '/metrics', 'GET');
    assert.equal(asked, 17);
  });

  it('decides again for the same user with other extra attributes (a pod-bound token)', async () => {
    const sars: unknown[] = [];
    const post = (path: string, body: object): Promise<unknown> => {
      const spec = (body as { spec: Record<string, unknown> }).spec;
      if (path.endsWith('/tokenreviews'))
        return Promise.resolve({
          status: {
            authenticated: true,
            user: { username: 'sa', groups: ['g'], extra: { pod: [String(spec['token'])] } },
          },
        });
      sars.push(spec['extra']);
      return Promise.resolve({ status: { allowed: true } });
    };
    const access = kubernetesMetricsAccess(post, log);
    await access.check('Bearer pod-a', '/metrics', 'GET');
    await access.check('Bearer pod-b', '/metrics', 'GET');
    assert.deepEqual(sars, [{ pod: ['pod-a'] }, { pod: ['pod-b'] }]);
  });
});
