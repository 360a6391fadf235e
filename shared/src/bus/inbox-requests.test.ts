// What a request on the connection's inbox fails with when NATS is not
// there is waited out as NATS being unavailable, never charged to the
// object's retry budget (the requests themselves, on a real server:
// test/integration/inbox-publisher.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure } from '../errors/failure-class.js';
import { ConnectionClosed, NoResponders, RequestTimedOut } from './inbox-requests.js';

describe("the inbox's failures", () => {
  it('are transient: a timeout, a closed connection, no stream answering', () => {
    for (const error of [
      new RequestTimedOut('no answer in time'),
      new ConnectionClosed('closed'),
      new NoResponders('503'),
    ])
      assert.equal(classifyFailure(error), 'transient', error.name);
    assert.equal(classifyFailure(new Error('direct get from S: 408')), 'unknown');
  });
});
