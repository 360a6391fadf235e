import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCodes } from '../errors/mod.js';
import { TerminalError, isTerminalError } from './terminal-error.js';

describe('TerminalError', () => {
  it('carries the terminal code and its cause', () => {
    const cause = new Error('422');
    const error = new TerminalError('invalid spec', { cause });
    assert.equal(error.code, ErrorCodes.Terminal);
    assert.equal(error.cause, cause);
    assert.ok(isTerminalError(error));
  });

  it('is recognised when thrown by another copy of kubebus (same name and code)', () => {
    class OtherCopy extends Error {
      override readonly name = 'TerminalError';
      readonly code = ErrorCodes.Terminal;
    }
    assert.ok(isTerminalError(new OtherCopy('bad spec')));
  });

  it('is not any error named TerminalError, nor any error with a code', () => {
    class Lookalike extends Error {
      override readonly name = 'TerminalError';
    }
    assert.ok(!isTerminalError(new Lookalike('no code')));
    assert.ok(!isTerminalError(Object.assign(new Error('x'), { code: ErrorCodes.Terminal })));
    assert.ok(!isTerminalError({ name: 'TerminalError', code: ErrorCodes.Terminal }));
  });
});
