// ctx.readSecret's two pure parts: whether the operator declared a rule that
// lets its reconciler get the Secret (refused before the apiserver is asked),
// and the values decoded as text, a value that is not text named, never shown.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineOperator, defineResource, isTerminalError } from '@kubebus/shared/definition';
import type { RbacRule } from '@kubebus/shared/definition';
import { secretPlaceRefusal, secretReadRefusal, secretValuesOf } from './secret-values.js';

const App = defineResource({
  group: 'apps.example.com',
  version: 'v1',
  kind: 'App',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({}),
});

const operatorWith = (rules?: RbacRule[]) =>
  defineOperator({
    name: 'apps',
    for: App,
    ...(rules === undefined ? {} : { rbac: { rules } }),
    reconcile: () => Promise.resolve(undefined),
  });

const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('ctx.readSecret', () => {
  it('is refused, saying what to declare, without a rule to get Secrets', () => {
    assert.match(
      secretReadRefusal(operatorWith(), 'db') ?? '',
      /declares no rule to get Secrets: add `rbac: \{ rules:/,
    );
    // a rule on Secrets without get, or get on something else, grants nothing
    const others = operatorWith([
      { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: ['example.com'], resources: ['secrets'], verbs: ['get'] },
    ]);
    assert.match(secretReadRefusal(others, 'db') ?? '', /declares no rule/);
  });

  it('is allowed by a rule on every Secret, or on the Secret by name, and no other', () => {
    const any = operatorWith([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    assert.equal(secretReadRefusal(any, 'db'), undefined);
    const named = operatorWith([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['db', 'cache'] },
    ]);
    assert.equal(secretReadRefusal(named, 'cache'), undefined);
    assert.match(
      secretReadRefusal(named, 'payroll') ?? '',
      /Secret payroll is not among the resourceNames/,
    );
  });

  it('answers the values as text, and refuses a value that is not UTF-8 without showing it', () => {
    assert.deepEqual(secretValuesOf({ user: base64('app'), password: base64('pässwörd') }, 'db'), {
      user: 'app',
      password: 'pässwörd',
    });
    assert.deepEqual(secretValuesOf(undefined, 'empty'), {});
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80]).toString('base64');
    assert.throws(
      () => secretValuesOf({ 'keystore.p12': binary }, 'tls'),
      (error: unknown) =>
        isTerminalError(error) &&
        /key keystore\.p12 of Secret tls is not UTF-8 text/.test(error.message) &&
        !error.message.includes(binary),
    );
  });

  it('reads only a well-named Secret in the object’s own namespace (a cluster-scoped one says where)', () => {
    assert.equal(secretPlaceRefusal('db', undefined, 'shop'), undefined);
    assert.equal(secretPlaceRefusal('db', 'shop', 'shop'), undefined);
    assert.match(
      secretPlaceRefusal('db', 'payroll', 'shop') ?? '',
      /in namespace payroll, not the object's \(shop\)/,
    );
    // an empty name would make the GET a list of every Secret
    assert.match(
      secretPlaceRefusal('', undefined, 'shop') ?? '',
      /name "" is not a lowercase RFC 1123 subdomain/,
    );
    assert.match(secretPlaceRefusal('db', 'Bad_NS', 'shop') ?? '', /namespace "Bad_NS"/);
    assert.match(
      secretPlaceRefusal('db', undefined, '') ?? '',
      /needs a namespace \(the primary is cluster-scoped\)/,
    );
    assert.equal(secretPlaceRefusal('db', 'shop', ''), undefined);
  });
});
