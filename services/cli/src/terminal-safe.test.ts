import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeadLetter, OutcomeRecord } from '@kubebus/shared/bus';
import { kubeEvent } from '@kubebus/shared/events';
import { formatLetter } from './dlq.js';
import { formatHistory } from './history.js';
import { formatStatus, type ObjectStatus } from './status.js';
import { formatTailLine } from './tail.js';
import { printable, safeField, safeText } from './terminal-safe.js';
import { machine } from './command.js';
import { parse as parseYaml } from 'yaml';

/** What a sender of a dead letter or the writer of an Event can put in a field. */
const HOSTILE = [
  '\u001b[2J\u001b[H', // clear the screen, cursor home
  '\u001b]0;pwned\u0007', // set the window title
  '\u009b31m', // C1 CSI
  '\r\u001b[Kfake line', // overwrite the line
  '\u202eevil\u202c', // right-to-left override
  '\u2066isolate\u2069',
  '\u200f\u061c',
  '\u0000\u007f',
  'two\nlines\u2028sep',
  'zero\u200bwidth\u2060\ufeff\u00ad', // invisible: hidden text for a reader or a tool
  'tag\u{E0041}\u{E007F}', // Unicode tag characters
].join('|');

/** No raw control or bidi character (a newline only where the formatter put one). */
const UNSAFE = /(?!\n)[\p{Cc}\p{Cf}\u2028\u2029]/u;

describe('the terminal-safe printer', () => {
  it('escapes control characters and bidi controls, and nothing else', () => {
    assert.equal(safeField('\u001b[31mred'), '\\u{001b}[31mred');
    assert.equal(safeField('a\u202eb'), 'a\\u{202e}b');
    assert.equal(safeField('a\nb'), 'a\\u{000a}b');
    assert.equal(safeText('a\nb\u0007'), 'a\nb\\u{0007}');
    assert.equal(safeField('naïve — 名前 ✓'), 'naïve — 名前 ✓');
    assert.equal(printable('  many\n\t lines  ', 80), 'many lines');
    assert.equal(printable('x'.repeat(10), 5), 'xxxx…');
    assert.doesNotMatch(safeField(HOSTILE), UNSAFE);
    assert.doesNotMatch(safeField(HOSTILE), /\n/);
    assert.equal(safeField('a\u200bb\u{E0041}'), 'a\\u{200b}b\\u{e0041}');
  });

  it('prints -o json and -o yaml with every unsafe character escaped, the same data to a parser', () => {
    const value = { [`key${HOSTILE}`]: { reason: HOSTILE, list: [HOSTILE, 'plain'] }, n: 3 };
    const json = machine('json', value);
    assert.doesNotMatch(json, UNSAFE);
    assert.deepEqual(JSON.parse(json), value);
    const yaml = machine('yaml', value);
    assert.doesNotMatch(yaml, UNSAFE);
    assert.deepEqual(parseYaml(yaml), value);
    // nothing to escape: YAML as ever
    assert.equal(machine('yaml', { a: 'b' }), 'a: b\n');
    // a long string beside a hostile one, double-quoted too: not folded (yaml 2 folding a
    // line of one space after one ending in a backslash read back as "\ ")
    const script = 'run: make build \\\n  && echo "done, see C:\\logs\\"\necho last line\\\n \n';
    const both = { script: script.repeat(4), reason: 'zero\u200bwidth' };
    assert.deepEqual(parseYaml(machine('yaml', both)), both);
  });

  const key = {
    group: 'example.kubebus.dev',
    resource: 'databaseclusters',
    namespace: 'ns',
    name: 'db',
  };
  const letter: DeadLetter = {
    origin: `reconciler${HOSTILE}`,
    key: { ...key, name: `db${HOSTILE}` },
    reason: `Knative gave up: ${HOSTILE}`,
    code: `KUBEBUS_DELIVERY_FAILED${HOSTILE}`,
    attempts: 1,
    time: `2026-01-01T00:00:00Z${HOSTILE}`,
  };
  const outcome: OutcomeRecord = {
    controller: `databasecluster${HOSTILE}`,
    result: `error${HOSTILE}`,
    ms: 3,
    attempt: 2,
    error: `failed ${HOSTILE}`,
    reconcileId: 'r1',
    traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
    at: '2026-01-01T00:00:00Z',
  };

  it('is what dlq, history, status and tail print every bus- and apiserver-sourced field with', () => {
    const event = kubeEvent({
      resource: { group: key.group, version: 'v1alpha1', resource: key.resource, namespaced: true },
      object: {
        apiVersion: `${key.group}/v1alpha1`,
        kind: 'DatabaseCluster',
        metadata: { name: 'db', namespace: 'ns', uid: 'u', resourceVersion: '2' },
        metadata2: HOSTILE,
      },
      op: 'update',
      reason: 'watch',
      source: 'https://apiserver',
      time: new Date('2026-01-01T00:00:00Z'),
    });
    const previous = { ...event, data: { ...event.data, metadata2: 'before' } } as typeof event;
    const status: ObjectStatus = {
      key: { ...key, name: `db${HOSTILE}` },
      found: 'apiserver',
      generation: 2,
      deleting: false,
      conditions: [
        {
          type: `Ready${HOSTILE}`,
          status: 'False',
          reason: `Bad${HOSTILE}`,
          message: `condition ${HOSTILE}`,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      events: [{ type: 'Warning', reason: `R${HOSTILE}`, message: `event ${HOSTILE}` }],
      work: [{ controller: `c${HOSTILE}`, partition: 1, heldBy: `replica${HOSTILE}` }],
      outcomes: [outcome],
      letters: [
        { seq: 1, time: letter.time, origin: letter.origin, attempts: 1, reason: letter.reason },
      ],
    };
    const printed = {
      dlq: formatLetter({ seq: 1, letter }),
      history: formatHistory(
        [
          { seq: 1, event: previous },
          { seq: 2, event },
        ],
        [{ ...letter, seq: 1 }],
        [outcome],
      ),
      status: formatStatus(status, Date.parse('2026-01-01T00:01:00Z')),
      tail: formatTailLine({
        time: `t${HOSTILE}`,
        op: 'update',
        object: `databaseclusters/${HOSTILE}`,
        resourceVersion: `2${HOSTILE}`,
        generation: 1,
        reason: `watch${HOSTILE}`,
        traceId: `trace${HOSTILE}`,
      }),
    };
    for (const [command, text] of Object.entries(printed)) {
      assert.doesNotMatch(text, UNSAFE, `${command} printed a raw control character`);
      assert.doesNotMatch(text, /fake line\n|lines\n/, `${command} let a field start a new line`);
      assert.match(text, /\\u\{001b\}\[2J/, `${command} hid what was sent`);
    }
  });
});
