// Spans: each component's part of a change (the watcher's publish, a
// reconcile, a status patch) as a span of the trace the traceparent carries.
// Without an exporter a span is only its traceparent; with one (otlp.ts)
// every ended span is sent to an OpenTelemetry collector.
import { continueTrace, parseTraceparent } from './trace.js';

/** OpenTelemetry's span kinds (the numbers OTLP uses). */
export const SpanKinds = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
export type SpanKind = keyof typeof SpanKinds;

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export interface Span {
  /** this span's traceparent: what the next component continues */
  readonly traceparent: string;
  /** ends the span; an error marks it failed */
  end(error?: string): void;
}

/** An ended span, as an exporter receives it. */
export interface EndedSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: SpanAttributes;
  readonly error?: string;
}

export interface Spans {
  /** A span continuing `parent` (a traceparent), or starting a trace without one. */
  start(
    name: string,
    kind: SpanKind,
    parent: string | undefined,
    attributes?: SpanAttributes,
  ): Span;
}

/** Wall-clock nanoseconds, as OTLP wants them. */
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** Spans handed to `exported` when they end; without it, traceparents only. */
export function spans(exported?: (span: EndedSpan) => void): Spans {
  return {
    start(name, kind, parent, attributes = {}) {
      const traceparent = continueTrace(parent);
      if (exported === undefined) return { traceparent, end: () => undefined };
      const startNs = nowNs();
      const own = parseTraceparent(traceparent);
      const from = parseTraceparent(parent);
      let ended = false;
      return {
        traceparent,
        end(error) {
          if (ended || own === undefined) return;
          ended = true;
          exported({
            name,
            kind,
            traceId: own.traceId,
            spanId: own.spanId,
            ...(from === undefined ? {} : { parentSpanId: from.spanId }),
            startNs,
            endNs: nowNs(),
            attributes,
            ...(error === undefined ? {} : { error }),
          });
        },
      };
    },
  };
}
