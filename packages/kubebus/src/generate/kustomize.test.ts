import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { ROLES } from '../host/role-configs.js';
import { kustomizeFiles } from './kustomize.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

describe('kustomizeFiles', () => {
  const files = kustomizeFiles(
    site,
    ROLES,
    plainSettings({ namespace: 'ops', image: 'i:1', module: 'm.js', watchNamespaces: [] }),
  );

  it('lists only files it writes, and leaves monitoring to an overlay', () => {
    for (const dir of ['', 'nats/', 'monitoring/']) {
      const kustomization = parse(files[`${dir}kustomization.yaml`] ?? '') as {
        resources: string[];
        configMapGenerator?: { files: string[] }[];
      };
      const listed = [
        ...kustomization.resources,
        ...(kustomization.configMapGenerator ?? []).flatMap((g) => g.files),
      ];
      for (const resource of listed)
        assert.ok(
          files[`${dir}${resource}`] !== undefined ||
            files[`${dir}${resource}/kustomization.yaml`] !== undefined,
          `${dir}${resource}`,
        );
      if (dir === '') assert.ok(!kustomization.resources.includes('monitoring'));
    }
  });

  it('puts every namespaced object in the namespace', () => {
    const objects = Object.entries(files)
      .filter(([path]) => path.endsWith('.yaml') && !path.endsWith('kustomization.yaml'))
      .flatMap(([, text]) =>
        parseAllDocuments(text).map(
          (d) => d.toJSON() as { kind: string; metadata: { namespace?: string } },
        ),
      );
    const clusterScoped = [
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
    ];
    for (const object of objects)
      assert.equal(
        object.metadata.namespace,
        clusterScoped.includes(object.kind) ? undefined : 'ops',
        object.kind,
      );
  });
});
