// OpenTelemetry traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, each service
// sends its spans over OTLP/HTTP, and one change is one trace — the
// watcher's publish, the reconcile it caused, the status patch that
// reconcile asked for — each span the child of the one before. The collector
// here is an in-process OTLP/HTTP receiver that keeps what it is sent.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import { waitFor } from '../support/wait.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
  status: { code: number };
}
interface ExportRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}
type ReceivedSpan = OtlpSpan & { service: string };

/** An OTLP/HTTP receiver (JSON encoding), as a collector's 4318 port is. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/json') {
        res.writeHead(415).end();
        return;
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const { resource, scopeSpans } of request.resourceSpans) {
        const service =
          resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const scope of scopeSpans)
          for (const span of scope.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

const attribute = (span: OtlpSpan, key: string) =>
  span.attributes.find((a) => a.key === key)?.value.stringValue;

describe('OpenTelemetry traces over OTLP', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let pipeline: Pipeline;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    bed = await TestBed.start();
    await installDatabaseClusterCrd(bed);
    pipeline = new Pipeline(bed);
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    await pipeline.watcher(otel);
    await pipeline.reconciler(otel);
    await pipeline.statusWriter(otel);
  });

  after(async () => {
    await pipeline.stop();
    await bed.stop();
    receiver.server.close();
  });

  it('sends one trace per change: publish → reconcile → status patch, each the child of the last', async () => {
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'traced' } } });
    await bed
      .kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .createNamespacedCustomObject({
        group: 'example.kubebus.dev',
        version: 'v1alpha1',
        plural: 'databaseclusters',
        namespace: 'traced',
        body: {
          apiVersion: 'example.kubebus.dev/v1alpha1',
          kind: 'DatabaseCluster',
          metadata: { name: 'orders' },
          spec: { engine: 'postgres', version: '16', storage: { size: '1Gi' } },
        },
      });
    const chain = () => {
      const publishes = receiver.spans.filter(
        (s) =>
          s.name === 'publish databaseclusters' &&
          attribute(s, 'k8s.object.name') === 'orders' &&
          attribute(s, 'kubebus.op') === 'add',
      );
      for (const publish of publishes) {
        const reconcile = receiver.spans.find(
          (s) => s.parentSpanId === publish.spanId && s.name === 'reconcile databasecluster',
        );
        const patch =
          reconcile &&
          receiver.spans.find(
            (s) => s.parentSpanId === reconcile.spanId && s.name === 'reconcile status-writer',
          );
        if (reconcile && patch) return { publish, reconcile, patch };
      }
      return undefined;
    };
    await waitFor(
      () => chain() !== undefined,
      'publish → reconcile → status patch spans',
      60_000,
    ).catch((error: unknown) => {
      // what did arrive, to say which link is missing
      const seen = receiver.spans.map(
        (s) =>
          `${s.service} ${s.name} ${s.spanId}<-${s.parentSpanId ?? ''} ${attribute(s, 'k8s.object.name') ?? ''}`,
      );
      throw new Error(`${(error as Error).message}; received:\n${seen.join('\n')}`);
    });
    const { publish, reconcile, patch } = chain() ?? assert.fail();
    // one trace, three services, in order, each ended
    assert.equal(publish.parentSpanId ?? '', '', 'the publish starts the trace');
    assert.equal(reconcile.traceId, publish.traceId);
    assert.equal(patch.traceId, publish.traceId);
    assert.deepEqual(
      [publish.service, reconcile.service, patch.service],
      [
        'kubebus-databasecluster-watcher',
        'kubebus-databasecluster-reconciler',
        'kubebus-databasecluster-status-writer',
      ],
    );
    assert.deepEqual(
      [publish.kind, reconcile.kind, patch.kind],
      [4, 5, 5], // producer, consumer, consumer
    );
    for (const span of [publish, reconcile, patch]) {
      assert.match(span.traceId, /^[0-9a-f]{32}$/);
      assert.ok(BigInt(span.endTimeUnixNano) >= BigInt(span.startTimeUnixNano));
      assert.equal(span.status.code, 1, `${span.name} succeeded`);
    }
    assert.ok(BigInt(reconcile.startTimeUnixNano) >= BigInt(publish.startTimeUnixNano));
    assert.equal(attribute(reconcile, 'k8s.namespace.name'), 'traced');
  });
});
