// What the compiler accepts as `ctx.apply(kind, body)`: `npm run typecheck`
// covers this file, and each `@ts-expect-error` fails the type-check when the
// line below it compiles (a misspelt field that slipped through). At run time
// only the kinds' coordinates are checked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import type { ReconcileContext } from './context.js';
import * as kinds from './kinds.js';
import { apiVersionOf, defineResource, type BodyOf, type ObjectOf } from './resource.js';

const Widget = defineResource({
  group: 'widgets.example.com',
  version: 'v1',
  kind: 'Widget',
  scope: 'Namespaced',
  spec: z.object({ size: z.int().default(1), colour: z.string() }),
  status: z.object({ painted: z.boolean() }),
});

// Never called: its body is what must (and must not) compile.
export async function reconcileBodies(ctx: ReconcileContext): Promise<number> {
  const deployment = await ctx.apply(kinds.Deployment, {
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
    },
  });
  await ctx.apply(kinds.Deployment, {
    metadata: { name: 'web' },
    // @ts-expect-error a misspelt field: `replica`
    spec: { replica: 2, selector: {}, template: {} },
  });
  // the wire's names, not client-node's (`_default`, `_from`): what the apiserver's schema knows
  const limits = await ctx.apply(kinds.LimitRange, {
    metadata: { name: 'limits' },
    spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] },
  });
  await ctx.apply(kinds.LimitRange, {
    metadata: { name: 'limits' },
    // @ts-expect-error client-node's own name for `default`
    spec: { limits: [{ type: 'Container', _default: { cpu: '500m' } }] },
  });
  await ctx.apply(kinds.NetworkPolicy, {
    metadata: { name: 'from-web' },
    spec: {
      podSelector: {},
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }],
    },
  });
  const cpuDefault: string | undefined = limits.spec?.limits[0]?.default?.['cpu'];
  await ctx.apply(kinds.ConfigMap, {
    metadata: { name: 'page' },
    // @ts-expect-error a value of the wrong type: data maps strings to strings
    data: { count: 1 },
  });
  // @ts-expect-error the kind comes from the handle, status is the apiserver's
  await ctx.apply(kinds.ConfigMap, { metadata: { name: 'page' }, status: {} });
  await ctx.apply(kinds.RoleBinding, {
    metadata: { name: 'admins' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'User', name: 'ada', apiGroup: 'rbac.authorization.k8s.io' }],
  });
  // @ts-expect-error a RoleBinding needs its roleRef
  await ctx.apply(kinds.RoleBinding, { metadata: { name: 'admins' } });
  // the operator's own resources: the spec as its schema takes it (defaults optional)
  const widget = await ctx.apply(Widget, { metadata: { name: 'w' }, spec: { colour: 'red' } });
  // @ts-expect-error a misspelt spec field: `color`
  await ctx.apply(Widget, { metadata: { name: 'w' }, spec: { color: 'red' } });
  // the untyped form still compiles, for kinds typed no further
  const any = await ctx.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  // what apply answers is typed by the kind: timestamps are strings, as on the wire
  const started: string | undefined = deployment.status?.conditions?.[0]?.lastUpdateTime;
  const namespace = await ctx.get(kinds.Namespace, 'tenant');
  const phase: string | undefined = namespace?.status?.phase;
  const size: number = widget.spec.size;
  return (
    (cpuDefault?.length ?? 0) +
    (started?.length ?? 0) +
    (phase?.length ?? 0) +
    size +
    any.metadata.name.length
  );
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const specTyped: Same<BodyOf<typeof Widget>['spec']['colour'], string> = true;
// a Secret is recorded without its data: reading it gives unknown, not a map of strings
export const secretRecordedWithoutData: Same<ObjectOf<typeof kinds.Secret>['data'], unknown> = true;
export const secretAppliedWithData: Same<
  BodyOf<typeof kinds.Secret>['stringData'],
  Readonly<Record<string, string>> | undefined
> = true;

describe('kinds', () => {
  it('name their API coordinates, core kinds in the group ""', () => {
    assert.equal(apiVersionOf(kinds.ConfigMap), 'v1');
    assert.equal(apiVersionOf(kinds.RoleBinding), 'rbac.authorization.k8s.io/v1');
    assert.equal(apiVersionOf(kinds.HorizontalPodAutoscaler), 'autoscaling/v2');
    assert.equal(apiVersionOf(kinds.PodDisruptionBudget), 'policy/v1');
    assert.equal(kinds.Namespace.scope, 'Cluster');
    assert.equal(kinds.ClusterRoleBinding.scope, 'Cluster');
    assert.equal(kinds.NetworkPolicy.plural, 'networkpolicies');
  });
});
