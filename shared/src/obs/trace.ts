// W3C Trace Context: the watcher starts a trace for each change, and every
// component after it continues that trace with a span of its own.
import { randomHex } from './random-hex.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: string;
}

export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, traceId = '', spanId = '', flags = ''] = match;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, flags };
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
}

/** A new trace (sampled), for a change that starts here. */
export function startTrace(): string {
  return formatTraceparent({
    traceId: randomHex(16),
    spanId: randomHex(8),
    flags: '01',
  });
}

/** The same trace with a new span; a new trace when the parent is missing or invalid. */
export function continueTrace(parent: string | undefined): string {
  const context = parseTraceparent(parent);
  if (context === undefined) return startTrace();
  return formatTraceparent({ ...context, spanId: randomHex(8) });
}
