import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutChars, publicErrorText, publicText, redactCredentials } from './public-text.js';

describe('public text', () => {
  it("drops a URL's credentials and query, whatever error quotes it", async () => {
    // what node's own fetch throws for a URL that carries credentials
    const thrown = await fetch('https://user:tok3n@example.invalid/x?api_key=S3CRET').catch(
      (error: unknown) => error,
    );
    const shown = publicErrorText(thrown);
    assert.doesNotMatch(shown, /tok3n|S3CRET/);
    assert.match(shown, /https:\/\/\[redacted\]@example\.invalid\/x\?\[redacted\]/);
    // node-fetch's and gaxios' shape: "request to <url> failed, reason: …"
    assert.equal(
      redactCredentials(
        'request to https://hooks.example.com/services/T0/B0?token=abc&x=1 failed, reason: connect ECONNREFUSED',
      ),
      'request to https://hooks.example.com/services/T0/B0?[redacted] failed, reason: connect ECONNREFUSED',
    );
    assert.equal(
      redactCredentials('postgres://app:pw@db:5432/shop is down'),
      'postgres://[redacted]@db:5432/shop is down',
    );
    // what has no secret stays as it was
    for (const plain of [
      'connect ECONNREFUSED 127.0.0.1:8080',
      'GET https://10.0.0.1:6443/api/v1/namespaces/shop/secrets/db: 403',
      'spec.replicas: Too big: expected number to be <=10',
    ])
      assert.equal(publicText(plain), plain);
  });

  it('drops keyed secrets, fragments and a password holding @, and leaves plain words alone', () => {
    assert.equal(
      redactCredentials('dial host=db user=app password=hunter2 sslmode=require'),
      'dial host=db user=app password=[redacted] sslmode=require',
    );
    assert.equal(
      redactCredentials('config {"client_secret":"abc123","api_key": "k"}'),
      'config {"client_secret":"[redacted]","api_key": "[redacted]"}',
    );
    assert.equal(
      redactCredentials('postgres://app:p@ss@db:5432/shop'),
      'postgres://[redacted]@db:5432/shop',
    );
    assert.equal(
      redactCredentials('see https://h/cb#access_token=abc'),
      'see https://h/cb#[redacted]',
    );
    assert.equal(redactCredentials('failed basic validation'), 'failed basic validation');
  });

  it('looks at a long hostile text in linear time, and keeps no half of a character', () => {
    // each pattern could restart inside such runs and scan them again: seconds, then minutes
    for (const run of ['a.', 'a+', 'a-', 'eyJ-', 'a@', 'Bearer ', 'password=']) {
      const hostile = run.repeat(Math.ceil((512 * 1024) / run.length));
      const shown = publicText(hostile);
      assert.ok(shown.length <= 64 * 1024 + 64, run);
    }
    assert.equal(cutChars('ab\u{1f600}', 3), 'ab');
    assert.equal(cutChars('ab\u{1f600}', 4), 'ab\u{1f600}');
  });

  it('drops bearer and basic credentials and JWTs', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl';
    const text = redactCredentials(
      `refused: Authorization: Bearer abcdef123456 (basic QWxhZGRpbjpvcGVu) token ${jwt}`,
    );
    assert.equal(
      text,
      'refused: Authorization: Bearer [redacted] (basic [redacted]) token [redacted]',
    );
  });

  it('escapes control and bidi characters a tenant wrote into a key', () => {
    const shown = publicText('Unrecognized key: "\u001b]0;owned\u0007\u202e"\nnext');
    assert.equal(shown, 'Unrecognized key: "\\u{001b}]0;owned\\u{0007}\\u{202e}"\\u{000a}next');
  });

  it('gives the same text again when given its own output (a status compared with itself)', () => {
    for (const text of [
      'https://u:p@h/p?q=1 and Bearer abcdefghijk',
      'a\u001bb',
      'http://h/p? done',
      'https://u:p\n@host/x',
      'https://h/p\t?token=abc',
    ]) {
      const once = publicText(text);
      assert.equal(publicText(once), once, text);
    }
  });
});
