// Which controllers a change marks: primaries, owners through their
// controller reference, and an operator's own `watches` mapping.
import type { KubeObject } from '@kubebus/shared/events';
import type { KubeClient } from '@kubebus/shared/kube';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { discoverTargets } from './targets.js';

/** Answers discovery only: the apiserver's resource lists for the groups used here. */
const discovery = {
  request: async (path: string) => {
    const lists: Record<string, unknown> = {
      '/api/v1': {
        resources: [
          { name: 'configmaps', namespaced: true, kind: 'ConfigMap' },
          { name: 'namespaces', namespaced: false, kind: 'Namespace' },
        ],
      },
      '/apis/sites.example.com/v1': {
        resources: [{ name: 'staticsites', namespaced: true, kind: 'StaticSite' }],
      },
    };
    const list = lists[path];
    if (list === undefined) throw new Error(`unexpected request ${path}`);
    return list;
  },
} as unknown as KubeClient;

function object(kind: string, name: string, namespace?: string, extra: object = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: {
      name,
      uid: `${name}-uid`,
      resourceVersion: '1',
      ...(namespace ? { namespace } : {}),
    },
    ...extra,
  };
}

describe('watch targets', () => {
  it('marks the objects a watches mapping names, in the watched object namespace by default', async () => {
    const targets = await discoverTargets(discovery, [
      {
        name: 'staticsite',
        for: 'staticsites.v1.sites.example.com',
        owns: [],
        watches: [
          {
            resource: 'configmaps.v1',
            map: (changed) =>
              changed.metadata.labels?.['site'] === undefined
                ? []
                : [{ name: changed.metadata.labels['site'] }, { name: 'shared', namespace: 'web' }],
          },
        ],
      },
    ]);
    const configMaps = targets.resources.find((r) => r.resource === 'configmaps');
    assert.ok(configMaps);
    const marks = targets.marksFor(
      configMaps,
      object('ConfigMap', 'theme', 'blog', {
        metadata: {
          name: 'theme',
          uid: 'u',
          resourceVersion: '1',
          namespace: 'blog',
          labels: { site: 'hello' },
        },
      }),
    );
    assert.deepEqual(
      marks.map(
        (mark) =>
          `${mark.controller} ${mark.key.resource}.${mark.key.group} ${mark.key.namespace}/${mark.key.name}`,
      ),
      [
        'staticsite staticsites.sites.example.com blog/hello',
        'staticsite staticsites.sites.example.com web/shared',
      ],
    );
    assert.deepEqual(targets.marksFor(configMaps, object('ConfigMap', 'other', 'blog')), []);
  });

  it('marks nothing for a mapping that throws or answers nonsense, and keeps going', async () => {
    const targets = await discoverTargets(discovery, [
      {
        name: 'staticsite',
        for: 'staticsites.v1.sites.example.com',
        owns: [],
        watches: [
          {
            resource: 'configmaps.v1',
            map: () => {
              throw new Error('a bug in the mapping');
            },
          },
          {
            resource: 'namespaces.v1',
            map: () => [{ name: '' }, null, 'x'] as never,
          },
        ],
      },
    ]);
    for (const resource of targets.resources.filter((r) => r.resource !== 'staticsites'))
      assert.deepEqual(targets.marksFor(resource, object(resource.kind, 'any')), []);
  });
});
