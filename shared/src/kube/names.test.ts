import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SUBJECT_BYTES, subjects } from '../bus/subjects.js';
import { ObjectKeySchema, validateObjectKey } from './names.js';
import type { ObjectKey } from './refs.js';

const key = (fields: Partial<ObjectKey>): ObjectKey => ({
  group: 'example.kubebus.dev',
  resource: 'databaseclusters',
  namespace: 'shop',
  name: 'orders',
  ...fields,
});

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
const subdomain = fc
  .array(label, { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join('.'))
  .filter((name) => name.length <= 253);

describe("Kubernetes' naming rules for object keys", () => {
  it('take DNS names, the core group and cluster scope', () => {
    for (const valid of [
      key({}),
      key({ group: '', resource: 'configmaps' }),
      key({ namespace: '' }),
      key({ name: 'a.b-c.d1' }),
      key({ name: 'x'.repeat(253) }),
      key({ namespace: 'n'.repeat(63) }),
    ])
      assert.equal(validateObjectKey(valid).ok, true, JSON.stringify(valid));
  });

  it('refuse what no object can be called, saying which part and why', () => {
    const cases: [Partial<ObjectKey>, RegExp][] = [
      [{ name: '..' }, /^invalid key: name "\.\." is not a lowercase RFC 1123 subdomain/],
      [{ name: '.' }, /name "\."/],
      [{ name: '' }, /name ""/],
      [{ name: 'a/b' }, /name "a\/b"/],
      [{ name: 'Orders' }, /name "Orders"/],
      [{ name: 'x'.repeat(254) }, /name "x{64}…" \(254 characters\)/],
      [{ name: 'x'.repeat(4_200) }, /\(4200 characters\)/],
      [{ name: 'a\u001b[31m' }, /name "a\\u001b\[31m"/],
      [
        { namespace: 'kube.system' },
        /^invalid key: namespace "kube\.system" is not a lowercase RFC 1123 label/,
      ],
      [{ namespace: 'n'.repeat(64) }, /namespace/],
      [{ group: 'Example.com' }, /API group "Example\.com"/],
      [{ resource: '' }, /resource ""/],
      [{ resource: 'stateful.sets' }, /resource "stateful\.sets"/],
    ];
    for (const [fields, reason] of cases) {
      const checked = validateObjectKey(key(fields));
      assert.equal(checked.ok, false, JSON.stringify(fields));
      if (!checked.ok) assert.match(checked.reason, reason);
    }
  });

  it('cut long values in the reason (a 400 never echoes 4 KB back)', () => {
    const checked = validateObjectKey(key({ name: 'x'.repeat(4_200) }));
    assert.ok(!checked.ok && checked.reason.length < 400);
  });

  it('let every valid key make a subject well under the limit', () => {
    fc.assert(
      fc.property(
        fc.record({
          group: fc.oneof(fc.constant(''), subdomain),
          resource: label,
          namespace: fc.oneof(fc.constant(''), label),
          name: subdomain,
        }),
        (k) => {
          assert.equal(validateObjectKey(k).ok, true);
          for (const subject of [subjects.event(k), subjects.work('c'.repeat(63), 999, k)])
            assert.ok(Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('are the schema of keys off the bus', () => {
    assert.equal(ObjectKeySchema.safeParse(key({})).success, true);
    const parsed = ObjectKeySchema.safeParse(key({ name: '..' }));
    assert.equal(parsed.success, false);
    assert.match(parsed.error?.issues[0]?.message ?? '', /invalid key: name "\.\."/);
  });
});
