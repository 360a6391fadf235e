import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure } from '../errors/failure-class.js';
import { apiErrorFrom, noAnswer } from './api-error.js';

describe('an apiserver error', () => {
  it("keeps the continue token of a 410 Expired list's Status", () => {
    const error = apiErrorFrom(
      410,
      JSON.stringify({
        kind: 'Status',
        reason: 'Expired',
        message: 'too old resource version',
        metadata: { continue: 'fresh' },
      }),
      {},
    );
    assert.equal(error.status, 410);
    assert.equal(error.continueToken, 'fresh');
    assert.equal(
      apiErrorFrom(410, '{"reason":"Expired","metadata":{}}', {}).continueToken,
      undefined,
    );
  });

  it("waits out a namespace not there yet; any other 404 is the object's", () => {
    const status = (details: object) =>
      JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'not found', details });
    // what the apiserver answers an apply into a namespace that does not exist
    const noNamespace = apiErrorFrom(404, status({ name: 'later', kind: 'namespaces' }), {});
    assert.deepEqual(noNamespace.details, { name: 'later', kind: 'namespaces' });
    assert.equal(classifyFailure(noNamespace), 'transient');
    const noObject = apiErrorFrom(404, status({ name: 'gone', kind: 'configmaps' }), {});
    assert.equal(classifyFailure(noObject), 'object');
    assert.equal(classifyFailure(apiErrorFrom(404, 'page not found', {})), 'object');
  });

  it("waits out a namespace being deleted; any other 403 but RBAC's (authorization-refusal.test.ts) is the object's", () => {
    // NamespaceLifecycle's answer to a write into a namespace being deleted
    const terminating = apiErrorFrom(
      403,
      JSON.stringify({
        kind: 'Status',
        reason: 'Forbidden',
        message:
          'serviceaccounts "bot" is forbidden: unable to create new content in namespace tenant-acme because it is being terminated',
        details: {
          name: 'bot',
          kind: 'serviceaccounts',
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: 'namespace tenant-acme is being terminated',
              field: 'metadata.namespace',
            },
          ],
        },
      }),
      {},
    );
    assert.deepEqual(terminating.details?.causes, ['NamespaceTerminating']);
    assert.equal(classifyFailure(terminating), 'transient');
    // as the test bed's apiserver answers it, without the cause: the message says so
    const byMessage = apiErrorFrom(
      403,
      JSON.stringify({
        kind: 'Status',
        reason: 'Forbidden',
        message:
          'configmaps "limits" is forbidden: unable to create new content in namespace tenant-acme because it is being terminated',
        details: { name: 'limits', kind: 'configmaps' },
      }),
      {},
    );
    assert.equal(classifyFailure(byMessage), 'transient');
    const forbidden = apiErrorFrom(
      403,
      JSON.stringify({ kind: 'Status', reason: 'Forbidden', message: 'cannot create secrets' }),
      {},
    );
    assert.equal(classifyFailure(forbidden), 'object');
    // a policy's own words are not the namespace controller's
    const policy = apiErrorFrom(
      403,
      JSON.stringify({
        kind: 'Status',
        reason: 'Forbidden',
        message: 'denied: this tenant is not allowed because it is being terminated by policy',
      }),
      {},
    );
    assert.equal(classifyFailure(policy), 'object');
  });

  it("takes a body the schema refuses as the object's fault, other 500s as the server's", () => {
    // what the apiserver answers a server-side apply with a field its schema does not declare
    const undeclared = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message:
          'Internal error occurred: failed to create typed patch object (team-alpha/limits; /v1, Kind=LimitRange): .spec.limits[0]._default: field not declared in schema',
      }),
      {},
    );
    assert.equal(classifyFailure(undeclared), 'object');
    assert.equal(undeclared.retryable, false);
    // a value its type cannot hold: a quantity that does not parse
    const unconvertible = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message:
          'failed to convert new object (tenant-broke/tenant-quota; /v1, Kind=ResourceQuota) to proper version: unable to convert unstructured object to /v1, Kind=ResourceQuota: quantities must match the regular expression',
      }),
      {},
    );
    assert.equal(classifyFailure(unconvertible), 'object');
    assert.equal(unconvertible.retryable, false);
    // the same wrapping around a conversion webhook that does not answer: an outage
    const webhookDown = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message:
          'failed to convert new object (shop/web; example.com/v1, Kind=App) to proper version (example.com/v2): conversion webhook for example.com/v1, Kind=App failed: Post "https://app-webhook.shop.svc:443/convert": connect: connection refused',
      }),
      {},
    );
    assert.equal(classifyFailure(webhookDown), 'transient');
    const overloaded = apiErrorFrom(
      500,
      JSON.stringify({
        kind: 'Status',
        reason: 'InternalError',
        message: 'etcdserver: leader changed',
      }),
      {},
    );
    assert.equal(classifyFailure(overloaded), 'transient');
    assert.equal(overloaded.retryable, true);
  });

  it('says why there was no answer, where Node gives an empty message', () => {
    const refused = (port: number) =>
      Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });
    // what `fetch`/`net` give for `localhost`: one attempt per address, no message of its own
    const both = new AggregateError([refused(1), refused(1)], '');
    assert.equal(
      noAnswer(both).message,
      'no answer from the apiserver: connect ECONNREFUSED 127.0.0.1:1',
    );
    const bare = Object.assign(new Error(''), { code: 'ECONNRESET' });
    assert.equal(noAnswer(bare).message, 'no answer from the apiserver: ECONNRESET');
    assert.equal(noAnswer(bare).status, 0);
    assert.equal(classifyFailure(noAnswer(bare)), 'transient');
  });

  it('waits out a 401: the operator’s credentials (a rotated token), not the object', () => {
    const unauthorized = apiErrorFrom(
      401,
      JSON.stringify({
        kind: 'Status',
        reason: 'Unauthorized',
        message: 'Unauthorized',
        code: 401,
      }),
      {},
    );
    assert.equal(classifyFailure(unauthorized), 'transient');
  });
});
