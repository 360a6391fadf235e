// Ended spans sent to an OpenTelemetry collector over OTLP/HTTP (JSON
// encoding, POST <endpoint>/v1/traces), in batches, off the hot path. Why not
// the OpenTelemetry JS SDK: docs/adr/0009-otlp-exporter.md. A collector that
// is down costs dropped spans (counted), never a slower or failed reconcile.
import type { Counter } from 'prom-client';
import type { EndedSpan, SpanAttributes } from './spans.js';
import { SpanKinds } from './spans.js';

export interface OtlpOptions {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces */
  readonly url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS (e.g. an API key) */
  readonly headers: Readonly<Record<string, string>>;
  /** service.name of the resource */
  readonly serviceName: string;
  readonly serviceVersion: string;
  readonly flushEveryMs?: number;
  readonly maxBatch?: number;
  /** spans waiting past this are dropped (the collector is away) */
  readonly maxQueue?: number;
  readonly dropped?: Pick<Counter, 'inc'>;
}

export class OtlpExporter {
  #queue: EndedSpan[] = [];
  readonly #timer: NodeJS.Timeout;
  #sending: Promise<void> = Promise.resolve();

  constructor(private readonly options: OtlpOptions) {
    this.#timer = setInterval(() => {
      void this.flush();
    }, options.flushEveryMs ?? 1_000);
    this.#timer.unref();
  }

  export(span: EndedSpan): void {
    if (this.#queue.length >= (this.options.maxQueue ?? 10_000)) {
      this.options.dropped?.inc();
      return;
    }
    this.#queue.push(span);
    if (this.#queue.length >= (this.options.maxBatch ?? 512)) void this.flush();
  }

  /** Sends what is queued; one request at a time. */
  flush(): Promise<void> {
    this.#sending = this.#sending.then(async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.options.maxBatch ?? 512);
        try {
          const res = await fetch(this.options.url, {
            method: 'POST',
            headers: { ...this.options.headers, 'content-type': 'application/json' },
            body: JSON.stringify(this.#request(batch)),
            signal: AbortSignal.timeout(10_000),
          });
          if (!res.ok) this.options.dropped?.inc(batch.length);
          await res.body?.cancel();
        } catch {
          this.options.dropped?.inc(batch.length);
        }
      }
    });
    return this.#sending;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  /** An ExportTraceServiceRequest in OTLP's JSON encoding (ids in hex). */
  #request(batch: readonly EndedSpan[]) {
    return {
      resourceSpans: [
        {
          resource: {
            attributes: attributesOf({
              'service.name': this.options.serviceName,
              'service.version': this.options.serviceVersion,
            }),
          },
          scopeSpans: [
            {
              scope: { name: 'kubebus', version: this.options.serviceVersion },
              spans: batch.map((span) => ({
                traceId: span.traceId,
                spanId: span.spanId,
                ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }),
                name: span.name,
                kind: SpanKinds[span.kind],
                startTimeUnixNano: span.startNs.toString(),
                endTimeUnixNano: span.endNs.toString(),
                attributes: attributesOf(span.attributes),
                // 1 OK, 2 ERROR
                status: span.error === undefined ? { code: 1 } : { code: 2, message: span.error },
              })),
            },
          ],
        },
      ],
    };
  }
}

function attributesOf(attributes: SpanAttributes) {
  return Object.entries(attributes).map(([key, value]) => ({
    key,
    value:
      typeof value === 'string'
        ? { stringValue: value }
        : typeof value === 'boolean'
          ? { boolValue: value }
          : Number.isInteger(value)
            ? { intValue: String(value) }
            : { doubleValue: value },
  }));
}

/** OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2", values URL-encoded. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}
