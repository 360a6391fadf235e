import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEventName, truncateUtf8 } from './apply.js';

describe("an Event's name and note", () => {
  it('cuts a note to the bytes the apiserver allows, never inside a character', () => {
    assert.equal(truncateUtf8('short', 1024), 'short');
    assert.equal(truncateUtf8('x'.repeat(2000), 1024).length, 1024);
    // 'é' is two bytes: 1,023 bytes of 'a' leave room for none of it
    const cut = truncateUtf8(`${'a'.repeat(1023)}é`, 1024);
    assert.equal(cut, 'a'.repeat(1023));
    assert.ok(Buffer.byteLength(truncateUtf8('€'.repeat(400), 1024)) <= 1024);
    assert.equal(truncateUtf8('€'.repeat(400), 1024), '€'.repeat(341));
  });

  it('names an Event after its object with a unique part, as client-go does', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', uid: 'u', resourceVersion: '1' },
    };
    const first = newEventName(object);
    assert.match(first, /^c\.[0-9a-f]{16}$/);
    assert.notEqual(newEventName(object), first);
  });
});
