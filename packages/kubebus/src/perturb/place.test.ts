import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generalized, placeOf } from './place.js';

test('a namespaced run is its namespace: the namespace as a whole label becomes the placeholder', () => {
  const place = placeOf({ scope: 'Namespaced' }, 'kbt-3', 'db');
  assert.deepEqual(
    [place.key, place.namespace, place.name, place.namespaced],
    ['kbt-3', 'kbt-3', 'db', true],
  );
  assert.equal(place.general('db.kbt-3.svc'), 'db.<namespace>.svc');
  assert.equal(
    place.general('kbt-30 xkbt-3 kbt-3x'),
    'kbt-30 xkbt-3 kbt-3x',
    'only the whole label',
  );
  assert.equal(place.specific('ConfigMap/db'), 'ConfigMap/db');
});

test('a cluster-scoped run is a name of its own, replaced inside other names and put back', () => {
  const place = placeOf({ scope: 'Cluster' }, 'kbt-1', 'acme');
  assert.deepEqual(
    [place.key, place.namespace, place.name, place.namespaced],
    ['acme-kbt-1', '', 'acme-kbt-1', false],
  );
  assert.equal(place.general('tenant-acme-kbt-1'), 'tenant-<name>');
  assert.equal(
    place.general('tenant-acme-kbt-12'),
    'tenant-acme-kbt-12',
    'another run, not this one',
  );
  assert.equal(
    place.specific('RoleBinding/tenant-<name>/admins'),
    'RoleBinding/tenant-acme-kbt-1/admins',
  );
  assert.deepEqual(generalized(place, { 'Namespace/tenant-acme-kbt-1': ['acme-kbt-1', 3] }), {
    'Namespace/tenant-<name>': ['<name>', 3],
  });
});
