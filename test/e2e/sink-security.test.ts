// The reconciler's CloudEvents sink and its bus, attacked as a caller inside
// the cluster would (docs/security.md): who may send, how much, how slowly and
// how many at once, which keys, how many dead letters — each refused at the
// edge, and the reconciler's NATS connection never at stake.
import {
  DeadLetterSchema,
  Streams,
  encodeWorkMark,
  partitionOf,
  readMessages,
  subjects,
} from '@kubebus/shared/bus';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tcpConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { httpCall } from '../bed/http.js';
import { freePort } from '../bed/ports.js';
import { TestBed } from '../bed/testbed.js';
import { PARTITIONS, Pipeline, installDatabaseClusterCrd } from '../support/pipeline.js';
import type { ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const target = { group: 'example.kubebus.dev', version: 'v1alpha1', plural: 'databaseclusters' };
const NAMESPACE = 'sec';
const AUDIENCE = 'kubebus-sink';
/** the test bed apiserver's own audience (its service-account issuer) */
const APISERVER_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';
const SHARED_TOKEN = 'a-shared-sink-token-of-some-length';
/** nats-server's max_payload in this bed: the sink's body limit follows it */
const MAX_PAYLOAD = 256 * 1024;

interface Meta {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** A POST as Knative's ApiServerSource adapter makes it (binary mode). */
function knative(
  mode: 'resource' | 'ref',
  object: Meta,
  headers: Record<string, string> = {},
): RequestInit {
  const { apiVersion, kind } = object;
  const { name, namespace = '' } = object.metadata;
  return {
    method: 'POST',
    headers: {
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-source': 'https://kubernetes.default.svc',
      'ce-type': `dev.knative.apiserver.${mode}.update`,
      'ce-subject': `/apis/${apiVersion}/namespaces/${namespace}/${kind.toLowerCase()}s/${name}`,
      'ce-kind': kind,
      'ce-apiversion': apiVersion,
      'ce-name': name,
      'ce-namespace': namespace,
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(mode === 'ref' ? { kind, namespace, name, apiVersion } : object),
  };
}

const cluster = (name: string): Meta => ({
  apiVersion: `${target.group}/${target.version}`,
  kind: 'DatabaseCluster',
  metadata: { name, namespace: NAMESPACE, uid: randomUUID(), resourceVersion: '1' },
});

/** The reconciler's NATS connection never dropped (and it says it is ready). */
function assertConnectionKept(service: ServiceProcess): void {
  const dropped = service.logs().filter((line) => line['msg'] === 'nats disconnected');
  assert.deepEqual(dropped, [], 'the reconciler lost its NATS connection');
}

describe('the CloudEvents sink and the bus, attacked', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let pipeline: Pipeline;
  let open: ServiceProcess;
  let openSink: string;
  let tokenSink: string;
  let oidcSink: string;
  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const core = () => bed.kubeConfig().makeApiClient(CoreV1Api);
  const statefulSetExists = (name: string) =>
    bed
      .kubeConfig()
      .makeApiClient(AppsV1Api)
      .readNamespacedStatefulSet({ name, namespace: NAMESPACE })
      .then(
        () => true,
        () => false,
      );
  const createCluster = async (name: string): Promise<Meta> =>
    (await custom().createNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      body: {
        ...cluster(name),
        metadata: { name },
        spec: { engine: 'postgres', version: '16', replicas: 1, storage: { size: '1Gi' } },
      },
    })) as Meta;
  /** A token of a service account in NAMESPACE, for an audience (TokenRequest). */
  const tokenOf = async (account: string, audience: string): Promise<string> => {
    const answer = await httpCall(
      `${bed.apiserverUrl}/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${account}/token`,
      {
        method: 'POST',
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: [audience], expirationSeconds: 3600 },
        }),
        tls: bed.adminTls,
      },
    );
    assert.equal(answer.status, 201, answer.body);
    return (JSON.parse(answer.body) as { status: { token: string } }).status.token;
  };

  before(async () => {
    bed = await TestBed.start({ nats: { extraConfig: `max_payload: ${MAX_PAYLOAD}` } });
    nc = await connect({ servers: bed.natsUrl });
    await installDatabaseClusterCrd(bed);
    await core().createNamespace({ body: { metadata: { name: NAMESPACE } } });
    for (const name of ['sender', 'stranger', 'verifier'])
      await core().createNamespacedServiceAccount({
        namespace: NAMESPACE,
        body: { metadata: { name } },
      });
    const tokenFile = join(bed.dir, 'sink-token');
    writeFileSync(tokenFile, `${SHARED_TOKEN}\n`, { mode: 0o600 });
    pipeline = new Pipeline(bed);
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const sink = { KUBEBUS_CONSUME: 'false', KUBEBUS_HTTP_HOST: '127.0.0.1' };
    const started = await Promise.all([
      pipeline.reconciler({
        ...sink,
        KUBEBUS_HTTP_PORT: String(ports[0]),
        KUBEBUS_HTTP_MAX_IN_FLIGHT: '2',
        KUBEBUS_HTTP_HEADERS_TIMEOUT: '1s',
        KUBEBUS_HTTP_REQUEST_TIMEOUT: '10s',
      }),
      pipeline.reconciler({
        ...sink,
        KUBEBUS_HTTP_PORT: String(ports[1]),
        KUBEBUS_HTTP_AUTH: 'token',
        KUBEBUS_HTTP_TOKEN_FILE: tokenFile,
      }),
      pipeline.reconciler({
        ...sink,
        KUBEBUS_HTTP_PORT: String(ports[2]),
        KUBEBUS_HTTP_AUTH: 'oidc',
        KUBEBUS_HTTP_OIDC_AUDIENCE: AUDIENCE,
        KUBEBUS_HTTP_OIDC_SUBJECTS: `system:serviceaccount:${NAMESPACE}:sender`,
      }),
    ]);
    open = started[0];
    [openSink, tokenSink, oidcSink] = ports.map((port) => `http://127.0.0.1:${port}/`) as [
      string,
      string,
      string,
    ];
  });

  after(async () => {
    await pipeline.stop();
    await nc.close();
    await bed.stop();
  });

  describe('who may send', () => {
    it('refuses to start an unauthenticated sink on a non-loopback address, in one line', async () => {
      const refused = await pipeline.reconciler(
        {
          KUBEBUS_CONSUME: 'false',
          KUBEBUS_HTTP_HOST: '0.0.0.0',
          KUBEBUS_HTTP_PORT: String(await freePort()),
        },
        { waitReady: false },
      );
      await waitFor(
        () => refused.process.exitCode !== undefined,
        'the reconciler with an open sink on 0.0.0.0 to exit',
        60_000,
      );
      assert.equal(refused.process.exitCode, 2, refused.process.tail());
      assert.match(
        refused.process.tail(),
        /KUBEBUS_HTTP_AUTH: the CloudEvents sink on 0\.0\.0\.0:\d+ would take events from anyone/,
      );
    });

    it('token: 401 without the shared token or with another; reconciles with it', async () => {
      await createCluster('with-token');
      const request = knative('ref', cluster('with-token'));
      for (const authorization of [undefined, 'Bearer not-the-token', `Basic ${SHARED_TOKEN}`]) {
        const response = await fetch(tokenSink, {
          ...request,
          headers: {
            ...(request.headers as Record<string, string>),
            ...(authorization === undefined ? {} : { authorization }),
          },
        });
        assert.equal(response.status, 401, `${authorization}: ${await response.text()}`);
        assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      }
      assert.equal(await statefulSetExists('with-token'), false, 'a refused event reconciled');
      const accepted = await fetch(tokenSink, {
        ...request,
        headers: {
          ...(request.headers as Record<string, string>),
          authorization: `Bearer ${SHARED_TOKEN}`,
        },
      });
      assert.equal(accepted.status, 200, await accepted.text());
      assert.equal(await statefulSetExists('with-token'), true);
    });

    it("oidc: the apiserver verifies the sender's token for the sink's audience (401), the sender is checked (403)", async () => {
      await createCluster('with-oidc');
      const request = knative('ref', cluster('with-oidc'));
      const post = (authorization?: string) =>
        fetch(oidcSink, {
          ...request,
          headers: {
            ...(request.headers as Record<string, string>),
            ...(authorization === undefined ? {} : { authorization }),
          },
        });
      const cases: [string | undefined, number, RegExp][] = [
        [undefined, 401, /an OIDC bearer token is required/],
        ['Bearer not.a.jwt!', 401, /not a JWT/],
        [`Bearer ${await tokenOf('sender', 'another-audience')}`, 401, /not valid for audience/],
        [`Bearer ${SHARED_TOKEN}`, 401, /not a JWT/],
        [`Bearer ${await tokenOf('stranger', AUDIENCE)}`, 403, /stranger may not send/],
      ];
      for (const [authorization, status, reason] of cases) {
        const response = await post(authorization);
        assert.equal(response.status, status, authorization);
        assert.match(await response.text(), reason);
      }
      assert.equal(await statefulSetExists('with-oidc'), false, 'a refused event reconciled');
      const accepted = await post(`Bearer ${await tokenOf('sender', AUDIENCE)}`);
      assert.equal(accepted.status, 200, await accepted.text());
      assert.equal(await statefulSetExists('with-oidc'), true);
    });

    it('oidc needs create on tokenreviews.authentication.k8s.io: refused without the rule, allowed with it', async () => {
      const rbac = bed.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
      await rbac.createClusterRole({
        body: {
          metadata: { name: 'kubebus-sink-verifier' },
          rules: [
            {
              apiGroups: ['authentication.k8s.io'],
              resources: ['tokenreviews'],
              verbs: ['create'],
            },
          ],
        },
      });
      // a TokenReview as the service account: what the reconciler's own account asks
      const call = async (account: string) => {
        const token = await tokenOf(account, APISERVER_AUDIENCE);
        return new Promise<number>((resolve, reject) => {
          const req = httpsRequest(
            `${bed.apiserverUrl}/apis/authentication.k8s.io/v1/tokenreviews`,
            {
              method: 'POST',
              ca: bed.adminTls.ca,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end(
            JSON.stringify({
              apiVersion: 'authentication.k8s.io/v1',
              kind: 'TokenReview',
              spec: { token: 'x.y.z', audiences: [AUDIENCE] },
            }),
          );
        });
      };
      assert.equal(await call('verifier'), 403, 'a service account with no rule may review');
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: 'kubebus-sink-verifier' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'kubebus-sink-verifier',
          },
          subjects: [{ kind: 'ServiceAccount', name: 'verifier', namespace: NAMESPACE }],
        },
      });
      await waitFor(async () => (await call('verifier')) === 201, 'the rule to take effect');
    });
  });

  describe('how much, how slowly, how many at once', () => {
    it("refuses a body larger than the NATS server's max_payload with 413", async () => {
      const big = { ...cluster('big'), pad: 'x'.repeat(MAX_PAYLOAD + 1) };
      const response = await fetch(openSink, knative('resource', big));
      assert.equal(response.status, 413, await response.text());
    });

    it('closes a connection that has not sent its headers within the headers timeout', async () => {
      const url = new URL(openSink);
      const socket = tcpConnect(Number(url.port), url.hostname);
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('POST / HTTP/1.1\r\nHost: sink\r\nce-id: slow');
      let closed = false;
      socket.once('close', () => {
        closed = true;
      });
      socket.resume();
      // the headers timeout is 1 s; Node's default would keep it 60 s
      await waitFor(() => closed, 'the server to close the slow connection', 5_000);
    });

    it('answers 503 with Retry-After past the in-flight cap, and serves again once below it', async () => {
      const url = new URL(openSink);
      const held: Socket[] = [];
      try {
        for (let i = 0; i < 2; i++) {
          // headers sent, most of the body held back: the request stays in flight
          const socket = tcpConnect(Number(url.port), url.hostname);
          socket.on('error', () => undefined);
          await new Promise((resolve) => socket.once('connect', resolve));
          socket.write(
            'POST / HTTP/1.1\r\nHost: sink\r\ncontent-type: application/cloudevents+json\r\ncontent-length: 1000\r\n\r\n{"id":',
          );
          held.push(socket);
        }
        let answer: Response | undefined;
        await waitFor(async () => {
          answer = await fetch(openSink, { method: 'POST', body: '{}' });
          return answer.status === 503;
        }, 'a 503 from the sink at its in-flight cap');
        assert.equal(answer?.headers.get('retry-after'), '1');
      } finally {
        for (const socket of held) socket.destroy();
      }
      await waitFor(
        async () => (await fetch(openSink, { method: 'POST', body: '{}' })).status === 400,
        'the sink to take requests again',
      );
    });
  });

  describe('which keys', () => {
    it('answers 400 to a 4.2 KB name, keeps its NATS connection, and reconciles a valid object after', async () => {
      const long = cluster('x'.repeat(4_200));
      for (const request of [knative('resource', long), knative('ref', long)]) {
        const response = await fetch(openSink, request);
        assert.equal(response.status, 400);
        assert.match(await response.text(), /invalid key: name "x{64}…" \(4200 characters\)/);
      }
      await createCluster('after-long');
      const valid = await fetch(openSink, knative('ref', cluster('after-long')));
      assert.equal(valid.status, 200, await valid.text());
      assert.equal(await statefulSetExists('after-long'), true);
      assertConnectionKept(open);
    });

    it('answers 400 to `..` and other names no object can have, and reads nothing for them', async () => {
      const configMap = (name: string): Meta => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: NAMESPACE },
      });
      for (const request of [
        knative('ref', configMap('..')),
        knative('ref', cluster('..')),
        knative('ref', configMap('.')),
        knative('ref', configMap('a%2Fb')),
        knative('ref', { ...configMap('ok'), metadata: { name: 'ok', namespace: '..' } }),
      ]) {
        const response = await fetch(openSink, request);
        assert.equal(response.status, 400, request.body as string);
        assert.match(await response.text(), /^invalid key: (name|namespace) "/);
      }
    });

    it('answers 400 to an event without its required id, source, type or specversion', async () => {
      await createCluster('required');
      const request = knative('ref', cluster('required'));
      for (const attribute of ['ce-id', 'ce-source', 'ce-type']) {
        const headers = Object.fromEntries(
          Object.entries(request.headers as Record<string, string>).filter(
            ([name]) => name !== attribute,
          ),
        );
        const response = await fetch(openSink, { ...request, headers });
        assert.equal(response.status, 400, attribute);
        assert.match(await response.text(), new RegExp(`${attribute.slice(3)} is missing`));
      }
      const structured = await fetch(openSink, {
        method: 'POST',
        headers: { 'content-type': 'application/cloudevents+json' },
        body: JSON.stringify({ source: 's', type: 'dev.knative.apiserver.ref.update' }),
      });
      assert.equal(structured.status, 400);
      assert.match(await structured.text(), /attributes id, specversion are missing/);
      assert.equal(await statefulSetExists('required'), false);
    });
  });

  describe('dead letters', () => {
    it('stores one letter per CloudEvent however often it is sent, and none for an invalid key', async () => {
      await createCluster('lettered');
      const request = knative('resource', cluster('lettered'), {
        'ce-knativeerrorcode': '503',
        'ce-knativeerrordata': Buffer.from('x'.repeat(6_000)).toString('base64'),
      });
      for (let i = 0; i < 3; i++) {
        const response = await fetch(new URL('/dead-letters', openSink), request);
        assert.equal(response.status, 200, await response.text());
      }
      const invalid = await fetch(
        new URL('/dead-letters', openSink),
        knative('resource', cluster('Not_A_Name')),
      );
      assert.equal(invalid.status, 400);
      const letters = (await readMessages(nc, Streams.deadLetters, 'kubebus.dlq.>'))
        .map((message) =>
          DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
        )
        .filter((letter) => letter.code === 'KUBEBUS_DELIVERY_FAILED');
      assert.equal(letters.length, 1, JSON.stringify(letters.map((l) => l.key.name)));
      assert.equal(letters[0]?.eventId, (request.headers as Record<string, string>)['ce-id']);
      assert.ok((letters[0]?.reason.length ?? 0) < 1_000, 'the reason is cut');
    });
  });

  describe('bus messages', () => {
    it('parks a work mark with a key no object can have in the DLQ, with the reason; the connection stays', async () => {
      const consumer = await pipeline.reconciler({ KUBEBUS_CONSUME: 'true' });
      const evil = {
        group: target.group,
        resource: target.plural,
        namespace: NAMESPACE,
        name: 'y'.repeat(4_200),
      };
      // a short subject, a long key in the body
      const carrier = { ...evil, name: 'carrier' };
      const js = jetstream(nc);
      await js.publish(
        subjects.work('databasecluster', partitionOf(carrier, Number(PARTITIONS)), carrier),
        encodeWorkMark({ key: evil, reason: 'watch', time: new Date().toISOString() }),
      );
      let reason = '';
      await waitFor(async () => {
        const letters = (await readMessages(nc, Streams.deadLetters, 'kubebus.dlq.>')).map(
          (message) => DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
        );
        reason =
          letters.find((letter) => letter.code === 'KUBEBUS_MALFORMED_MESSAGE')?.reason ?? '';
        return reason !== '';
      }, 'the malformed work mark in the DLQ');
      assert.match(reason, /invalid key: name "y{64}…" \(4200 characters\)/);
      // and it still reconciles: a valid mark for an object only the apiserver knows
      await createCluster('after-mark');
      const key = { ...carrier, name: 'after-mark' };
      await js.publish(
        subjects.work('databasecluster', partitionOf(key, Number(PARTITIONS)), key),
        encodeWorkMark({ key, reason: 'watch', time: new Date().toISOString() }),
      );
      await waitFor(() => statefulSetExists('after-mark'), 'the valid mark reconciled');
      assertConnectionKept(consumer);
    });
  });
});
