import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTraffic, trafficBetween, type NatsTraffic } from './nats-traffic.js';

const reading = (ms: number, inMsgs: number, stored: Record<string, number>): NatsTraffic => ({
  inMsgs,
  outMsgs: inMsgs * 2,
  stored: new Map(Object.entries(stored)),
  consumers: new Map([['KUBEBUS_WORK', 4]]),
  ms,
});

describe('NATS traffic over a phase', () => {
  it('takes each stream’s stores, the messages and the window’s length between two readings', () => {
    const before = reading(10_000, 100, { KUBEBUS_EVENTS: 50, KV_kubebus_leases: 7 });
    const after = reading(95_000, 3_100, {
      KUBEBUS_EVENTS: 8_050,
      KV_kubebus_leases: 1_197,
      KUBEBUS_OUTCOMES: 3_000,
    });
    const traffic = trafficBetween(before, after);
    assert.equal(traffic.inMsgs, 3_000);
    assert.equal(traffic.outMsgs, 6_000);
    assert.equal(traffic.ms, 85_000);
    assert.deepEqual(
      traffic.stored,
      new Map([
        ['KUBEBUS_EVENTS', 8_000],
        ['KV_kubebus_leases', 1_190],
        ['KUBEBUS_OUTCOMES', 3_000],
      ]),
    );
  });

  it('says per object what is per object, and how long the window of what is per second was', () => {
    const line = formatTraffic(
      trafficBetween(
        reading(0, 0, { KV_kubebus_leases: 0 }),
        reading(85_000, 32_000, { KV_kubebus_leases: 1_190 }),
      ),
      1_000,
    );
    assert.match(line, /^messages in 32\.00, out 64\.00; stored: KV_kubebus_leases 1\.19;/);
    assert.match(line, /over 85 s, to quiet: leases and cursors are written per second/);
  });
});
