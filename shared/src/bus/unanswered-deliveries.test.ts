import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assess,
  deliveryRecordKey,
  laterRecord,
  type DeliveryRecord,
} from './unanswered-deliveries.js';

const answered = (delivery: number, crashes = 0): DeliveryRecord => ({
  seq: 7,
  delivery,
  crashes,
  started: false,
});
const started = (delivery: number, crashes = 0): DeliveryRecord => ({
  seq: 7,
  delivery,
  crashes,
  started: true,
});

describe('deaths blamed on a work message', () => {
  it('are none on the first delivery, which is no suspect', () => {
    assert.deepEqual(assess(undefined, 7, 1), { suspect: false, crashes: 0 });
  });

  it('are none for deliveries given back with a nak, however many (retries, requeue-after)', () => {
    let last: DeliveryRecord | undefined;
    for (let delivery = 1; delivery <= 500; delivery++) {
      const { suspect, crashes } = assess(last, 7, delivery);
      assert.deepEqual({ suspect, crashes }, { suspect: false, crashes: 0 });
      last = answered(delivery, crashes);
    }
  });

  it('make a delivery after an unanswered one a suspect, blaming nobody yet', () => {
    assert.deepEqual(assess(undefined, 7, 2), { suspect: true, crashes: 0 });
    assert.deepEqual(assess(answered(3), 7, 5), { suspect: true, crashes: 0 });
  });

  it('count each suspect start the next delivery finds unanswered', () => {
    let last: DeliveryRecord | undefined;
    // delivery 1 dies unrecorded; every later one starts as a suspect and dies
    for (let delivery = 2; delivery <= 7; delivery++) {
      const { suspect, crashes } = assess(last, 7, delivery);
      assert.equal(suspect, true);
      assert.equal(crashes, delivery - 2);
      last = started(delivery, crashes);
    }
  });

  it('keep the deaths counted across answered deliveries of the same message', () => {
    // started at 4 having 2 deaths, died; 5 was answered (a nak): 6 is no suspect, 3 deaths
    const { crashes } = assess(started(4, 2), 7, 5);
    assert.equal(crashes, 3);
    assert.deepEqual(assess(answered(5, crashes), 7, 6), { suspect: false, crashes: 3 });
  });

  it("ignore another message's record: a newer mark of the object starts again", () => {
    assert.deepEqual(assess({ ...started(40, 4), seq: 6 }, 7, 2), { suspect: true, crashes: 0 });
  });

  it('ignore a record past the delivery (the consumer was made again and counts from 1)', () => {
    assert.deepEqual(assess(started(9, 2), 7, 3), { suspect: true, crashes: 0 });
  });

  it("take the later of this process' and the bucket's record of the message", () => {
    assert.deepEqual(laterRecord(answered(5), started(3), 7), answered(5));
    assert.deepEqual(laterRecord(undefined, started(3), 7), started(3));
    assert.deepEqual(laterRecord(answered(3), started(3), 7), answered(3));
    assert.equal(laterRecord({ ...answered(5), seq: 2 }, undefined, 7), undefined);
  });

  it('are kept under the controller, so permissions keep an operator to its own', () => {
    const key = { group: 'example.kubebus.dev', resource: 'x', namespace: 'a', name: 'b.c' };
    const k = deliveryRecordKey('databasecluster', key);
    assert.match(k, /^databasecluster\.[0-9a-f]{40}$/);
    assert.notEqual(k, deliveryRecordKey('databasecluster', { ...key, name: 'b-c' }));
  });
});
