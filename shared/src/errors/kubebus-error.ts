import type { ErrorCode } from './codes.js';

export class KubebusError extends Error {
  override readonly name: string = 'KubebusError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isKubebusError(error: unknown): error is KubebusError {
  return error instanceof KubebusError;
}

export function hasCode(error: unknown, code: ErrorCode): error is KubebusError {
  return isKubebusError(error) && error.code === code;
}
