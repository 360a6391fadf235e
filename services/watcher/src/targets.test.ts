// Which controllers a change marks: primaries, owners through their
// controller reference, and an operator's own `watches` mapping.
import type { KubeObject } from '@kubebus/shared/events';
import { KubeApiError, type KubeClient } from '@kubebus/shared/kube';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { WatchMapping } from './config.js';
import { KnownObjects } from './known-objects.js';
import { NotServedError, discoverTargets, type Mark } from './targets.js';

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
      '/apis/tenancy.example.com/v1': {
        resources: [{ name: 'tenants', namespaced: false, kind: 'Tenant' }],
      },
      '/apis/rbac.authorization.k8s.io/v1': {
        resources: [{ name: 'rolebindings', namespaced: true, kind: 'RoleBinding' }],
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

/** The static sites' controller, watching ConfigMaps one way or the other. */
const staticSitesWatching = (watch: WatchMapping) =>
  discoverTargets(discovery, [
    { name: 'staticsite', for: 'staticsites.v1.sites.example.com', owns: [], watches: [watch] },
  ]);

describe('watch targets', () => {
  it('marks the objects a watches mapping names, in the watched object namespace by default', async () => {
    const targets = await staticSitesWatching({
      resource: 'configmaps.v1',
      map: (changed) =>
        changed.metadata.labels?.['site'] === undefined
          ? []
          : [{ name: changed.metadata.labels['site'] }, { name: 'shared', namespace: 'web' }],
    });
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
      'add',
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
    assert.deepEqual(targets.marksFor(configMaps, object('ConfigMap', 'other', 'blog'), 'add'), []);
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
      assert.deepEqual(targets.marksFor(resource, object(resource.kind, 'any'), 'add'), []);
  });
});

describe("a watches mapping's previous state", () => {
  const sitesOfConfigMaps = async () => {
    const targets = await staticSitesWatching({
      resource: 'configmaps.v1',
      map: (changed) => {
        const site = changed.metadata.labels?.['site'];
        return site === undefined ? [] : [{ name: site }];
      },
    });
    const configMaps = targets.resources.find((r) => r.resource === 'configmaps');
    assert.ok(configMaps);
    return { targets, configMaps };
  };
  const theme = (site?: string) =>
    object('ConfigMap', 'theme', 'blog', {
      metadata: {
        name: 'theme',
        uid: 'theme-uid',
        resourceVersion: '1',
        namespace: 'blog',
        ...(site === undefined ? {} : { labels: { site } }),
      },
    });
  const names = (marks: readonly Mark[]) =>
    marks.map((mark) => `${mark.key.namespace}/${mark.key.name}`).sort();

  it('marks the primary a relabelled object named before as well as the one it names now, once each', async () => {
    const { targets, configMaps } = await sitesOfConfigMaps();
    assert.deepEqual(names(targets.marksFor(configMaps, theme('a'), 'add')), ['blog/a']);
    assert.deepEqual(names(targets.marksFor(configMaps, theme('a'), 'update')), ['blog/a']);
    assert.deepEqual(names(targets.marksFor(configMaps, theme('b'), 'update')), [
      'blog/a',
      'blog/b',
    ]);
    // the label removed: the primary it named last hears of it, then nobody
    assert.deepEqual(names(targets.marksFor(configMaps, theme(), 'update')), ['blog/b']);
    assert.deepEqual(names(targets.marksFor(configMaps, theme(), 'update')), []);
  });

  it('marks what the last recorded state named: recalled at start, or gone in a relist', async () => {
    const { targets, configMaps } = await sitesOfConfigMaps();
    // seeded from the events stream: relabelled while the watcher was away
    targets.recall(configMaps, theme('a'));
    assert.deepEqual(names(targets.marksFor(configMaps, theme('b'), 'update')), [
      'blog/a',
      'blog/b',
    ]);
    // vanished in a watch gap: the relist's tombstone has no labels
    const known = new KnownObjects();
    known.remember(theme('b'));
    const before = known.get('theme-uid');
    assert.ok(before);
    const tombstone = known.tombstone(configMaps, 'theme-uid', before);
    assert.deepEqual(names(targets.marksFor(configMaps, tombstone, 'delete')), ['blog/b']);
    // forgotten once deleted: the same uid back without the label names nothing
    assert.deepEqual(names(targets.marksFor(configMaps, theme(), 'add')), []);
  });
});

describe("an owned object's previous controller owner", () => {
  const sitesOwningConfigMaps = async () => {
    const targets = await discoverTargets(discovery, [
      { name: 'staticsite', for: 'staticsites.v1.sites.example.com', owns: ['configmaps.v1'] },
    ]);
    const configMaps = targets.resources.find((r) => r.resource === 'configmaps');
    assert.ok(configMaps);
    return { targets, configMaps };
  };
  /** The child ConfigMap `page`, its controller the StaticSite `site` (none: orphaned). */
  const page = (site?: string) =>
    object('ConfigMap', 'page', 'blog', {
      metadata: {
        name: 'page',
        uid: 'page-uid',
        resourceVersion: '1',
        namespace: 'blog',
        ...(site === undefined
          ? {}
          : {
              ownerReferences: [
                {
                  apiVersion: 'sites.example.com/v1',
                  kind: 'StaticSite',
                  name: site,
                  uid: `${site}-uid`,
                  controller: true,
                },
              ],
            }),
      },
    });
  const names = (marks: readonly Mark[]) =>
    marks.map((mark) => `${mark.controller} ${mark.key.namespace}/${mark.key.name}`).sort();

  it('marks the owner that lost a child as well as the one that adopted it, and the last one of an orphan, once each', async () => {
    const { targets, configMaps } = await sitesOwningConfigMaps();
    assert.deepEqual(names(targets.marksFor(configMaps, page('a'), 'add')), ['staticsite blog/a']);
    assert.deepEqual(names(targets.marksFor(configMaps, page('a'), 'update')), [
      'staticsite blog/a',
    ]);
    // adopted by b: a hears that it lost it
    assert.deepEqual(names(targets.marksFor(configMaps, page('b'), 'update')), [
      'staticsite blog/a',
      'staticsite blog/b',
    ]);
    // orphaned: b hears of it, then nobody
    assert.deepEqual(names(targets.marksFor(configMaps, page(), 'update')), ['staticsite blog/b']);
    assert.deepEqual(names(targets.marksFor(configMaps, page(), 'update')), []);
  });

  it('marks the owner the last recorded state named, recalled at start', async () => {
    const { targets, configMaps } = await sitesOwningConfigMaps();
    // seeded from the events stream: adopted by b while the watcher was away
    targets.recall(configMaps, page('a'));
    assert.deepEqual(names(targets.marksFor(configMaps, page('b'), 'update')), [
      'staticsite blog/a',
      'staticsite blog/b',
    ]);
  });

  it('marks the owner of a deleted child, from its last state when a relist tombstone names none', async () => {
    const { targets, configMaps } = await sitesOwningConfigMaps();
    // a watch's delete carries the object: its owner is marked
    assert.deepEqual(names(targets.marksFor(configMaps, page('b'), 'add')), ['staticsite blog/b']);
    assert.deepEqual(names(targets.marksFor(configMaps, page('b'), 'delete')), [
      'staticsite blog/b',
    ]);
    // vanished in a watch gap: the relist's tombstone has no owner references
    assert.deepEqual(names(targets.marksFor(configMaps, page('a'), 'add')), ['staticsite blog/a']);
    const known = new KnownObjects();
    known.remember(page('a'));
    const before = known.get('page-uid');
    assert.ok(before);
    const tombstone = known.tombstone(configMaps, 'page-uid', before);
    assert.equal(tombstone.metadata.ownerReferences, undefined);
    assert.deepEqual(names(targets.marksFor(configMaps, tombstone, 'delete')), [
      'staticsite blog/a',
    ]);
    // forgotten once deleted: the same uid back as an orphan names nobody
    assert.deepEqual(names(targets.marksFor(configMaps, page(), 'add')), []);
  });

  it('keeps nothing of an owner reference no object could answer to', async () => {
    const { targets, configMaps } = await sitesOwningConfigMaps();
    // the apiserver asks an owner reference only for a non-empty name
    const huge = 'x'.repeat(1_000_000);
    assert.deepEqual(names(targets.marksFor(configMaps, page(huge), 'add')), []);
    assert.deepEqual(names(targets.marksFor(configMaps, page('Not A Name'), 'update')), []);
    // and the next change names only what it names
    assert.deepEqual(names(targets.marksFor(configMaps, page('a'), 'update')), [
      'staticsite blog/a',
    ]);
  });
});

describe('a child beyond an owner reference’s reach', () => {
  /** The ConfigMap `entry` in `registry`, applied for a StaticSite (kubebus.dev/owner). */
  const entry = (owner: string | undefined) =>
    object('ConfigMap', 'entry', 'registry', {
      metadata: {
        name: 'entry',
        uid: 'entry-uid',
        resourceVersion: '1',
        namespace: 'registry',
        ...(owner === undefined ? {} : { annotations: { 'kubebus.dev/owner': owner } }),
      },
    });
  const names = (marks: readonly Mark[]) =>
    marks.map((mark) => `${mark.controller} ${mark.key.namespace}/${mark.key.name}`).sort();

  it('marks the owner its annotation names, in the owner’s namespace, and the one it named before', async () => {
    const targets = await discoverTargets(discovery, [
      { name: 'staticsite', for: 'staticsites.v1.sites.example.com', owns: ['configmaps.v1'] },
    ]);
    const configMaps = targets.resources.find((r) => r.resource === 'configmaps');
    assert.ok(configMaps);
    const mine = 'StaticSite.sites.example.com blog/a';
    assert.deepEqual(names(targets.marksFor(configMaps, entry(mine), 'add')), [
      'staticsite blog/a',
    ]);
    // taken by another: both hear of it
    assert.deepEqual(
      names(targets.marksFor(configMaps, entry('StaticSite.sites.example.com docs/b'), 'update')),
      ['staticsite blog/a', 'staticsite docs/b'],
    );
    // another kind's, a malformed value, one too long: nobody
    for (const value of [
      'Tenant.tenancy.example.com blog/a',
      'StaticSite.sites.example.com a',
      'StaticSite.sites.example.com Blog/a',
      `StaticSite.sites.example.com blog/${'x'.repeat(600)}`,
    ]) {
      const fresh = await discoverTargets(discovery, [
        { name: 'staticsite', for: 'staticsites.v1.sites.example.com', owns: ['configmaps.v1'] },
      ]);
      const itsConfigMaps = fresh.resources.find((r) => r.resource === 'configmaps');
      assert.ok(itsConfigMaps);
      assert.deepEqual(names(fresh.marksFor(itsConfigMaps, entry(value), 'add')), [], value);
      // the same answers a well-formed one
      assert.deepEqual(names(fresh.marksFor(itsConfigMaps, entry(mine), 'update')), [
        'staticsite blog/a',
      ]);
    }
  });
});

describe('a resource the apiserver does not serve yet', () => {
  it('is said in one line naming what to apply: its group version missing, or the resource', async () => {
    const notFound = {
      request: async (path: string) => {
        if (path === '/apis/backup.example.com/v1')
          throw new KubeApiError(
            404,
            'NotFound',
            'the server could not find the requested resource',
          );
        return discovery.request(path);
      },
    } as unknown as KubeClient;
    for (const resource of ['backuppolicies.v1.backup.example.com', 'gadgets.v1.sites.example.com'])
      await assert.rejects(
        discoverTargets(notFound, [{ name: 'op', for: resource, owns: [] }]),
        (error: unknown) =>
          error instanceof NotServedError &&
          error.message.startsWith(`the apiserver does not serve ${resource} (`) &&
          error.message.includes('yet: apply the CRD that defines it'),
      );
  });
});

describe('what the watcher selects', () => {
  it('watches a kind only as kubebus children when every controller only owns it', async () => {
    const targets = await discoverTargets(discovery, [
      {
        name: 'tenant',
        for: 'tenants.v1.tenancy.example.com',
        owns: ['configmaps.v1', 'namespaces.v1'],
      },
      {
        name: 'staticsite',
        for: 'staticsites.v1.sites.example.com',
        owns: ['configmaps.v1'],
        watches: [{ resource: 'namespaces.v1', map: () => [] }],
      },
    ]);
    const only = Object.fromEntries(
      targets.resources.map((r) => [r.resource, targets.ownedOnly(r)]),
    );
    // owned by both: only kubebus' own; watched by a mapping: all of them; primaries: all of them
    assert.deepEqual(only, {
      tenants: false,
      configmaps: true,
      namespaces: false,
      staticsites: false,
    });
  });
});

describe('owner keys for every ownership shape', () => {
  const owner = (apiVersion: string, kind: string, name: string) => ({
    metadata: {
      ownerReferences: [{ apiVersion, kind, name, uid: `${name}-uid`, controller: true }],
    },
  });
  const dns = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);

  it('keys a change of a child by its owner: in the child namespace, or none for a cluster-scoped owner', async () => {
    const targets = await discoverTargets(discovery, [
      {
        name: 'tenant',
        for: 'tenants.v1.tenancy.example.com',
        owns: ['configmaps.v1', 'namespaces.v1', 'rolebindings.v1.rbac.authorization.k8s.io'],
      },
      {
        name: 'staticsite',
        for: 'staticsites.v1.sites.example.com',
        owns: ['configmaps.v1', 'namespaces.v1'],
      },
    ]);
    const resource = (name: string) => {
      const found = targets.resources.find((r) => r.resource === name);
      assert.ok(found, name);
      return found;
    };
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          { owner: ['tenancy.example.com/v1', 'Tenant'] as const, ownerNamespaced: false },
          { owner: ['sites.example.com/v1', 'StaticSite'] as const, ownerNamespaced: true },
        ),
        fc.constantFrom(
          { child: 'configmaps', kind: 'ConfigMap', namespaced: true },
          { child: 'rolebindings', kind: 'RoleBinding', namespaced: true },
          { child: 'namespaces', kind: 'Namespace', namespaced: false },
        ),
        dns,
        dns,
        dns,
        async (shape, child, ownerName, childName, childNamespace) => {
          const changed = object(
            child.kind,
            childName,
            child.namespaced ? childNamespace : undefined,
            {
              metadata: {
                name: childName,
                // another object each run: the owner of the one before is no previous state of it
                uid: `u${++runs}`,
                resourceVersion: '1',
                ...(child.namespaced ? { namespace: childNamespace } : {}),
                ...owner(shape.owner[0], shape.owner[1], ownerName).metadata,
              },
            },
          );
          const marks = targets.marksFor(resource(child.child), changed, 'update');
          if (shape.ownerNamespaced && !child.namespaced) {
            // Kubernetes has no such shape: a cluster-scoped object's owner cannot be namespaced
            assert.deepEqual(marks, []);
            return;
          }
          assert.equal(marks.length, 1);
          const [mark] = marks;
          assert.equal(mark?.key.name, ownerName);
          assert.equal(mark?.key.namespace, shape.ownerNamespaced ? childNamespace : '');
          assert.equal(mark?.controller, shape.ownerNamespaced ? 'staticsite' : 'tenant');
        },
      ),
    );
  });

  it('marks the primaries whose references name the changed object, as they are now', async () => {
    const targets = await staticSitesWatching({
      resource: 'configmaps.v1',
      references: (site) => {
        const spec = site['spec'] as { theme?: string; shared?: boolean };
        return [
          ...(spec.theme === undefined ? [] : [{ name: spec.theme }]),
          ...(spec.shared === true ? [{ name: 'fonts', namespace: 'web' }] : []),
        ];
      },
    });
    const sites = targets.resources.find((r) => r.resource === 'staticsites');
    const configMaps = targets.resources.find((r) => r.resource === 'configmaps');
    assert.ok(sites && configMaps);
    // a referenced kind is watched whole: its objects carry no owner's label
    assert.equal(targets.ownedOnly(configMaps), false);
    const site = (name: string, spec: object) => object('StaticSite', name, 'shop', { spec });
    const marked = (name: string, namespace: string) =>
      targets
        .marksFor(configMaps, object('ConfigMap', name, namespace), 'update')
        .map((mark) => `${mark.key.namespace}/${mark.key.name}`)
        .sort();
    targets.observe(sites, site('a', { theme: 'dark', shared: true }), 'add');
    targets.observe(sites, site('b', { theme: 'dark' }), 'add');
    assert.deepEqual(marked('dark', 'shop'), ['shop/a', 'shop/b']);
    assert.deepEqual(marked('fonts', 'web'), ['shop/a']);
    // the same name in another namespace is another object
    assert.deepEqual(marked('dark', 'other'), []);
    // a primary that changes what it names, or goes, no longer marked for the old one
    targets.observe(sites, site('b', { theme: 'light' }), 'update');
    targets.observe(sites, site('a', {}), 'delete');
    assert.deepEqual(marked('dark', 'shop'), []);
    assert.deepEqual(marked('fonts', 'web'), []);
    assert.deepEqual(marked('light', 'shop'), ['shop/b']);
    // references that throw or answer nonsense name nothing, and stop nothing
    targets.observe(sites, object('StaticSite', 'c', 'shop'), 'add');
    assert.deepEqual(marked('light', 'shop'), ['shop/b']);
  });
});
