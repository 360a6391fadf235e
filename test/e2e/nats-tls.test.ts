// The NATS transport boundary against real nats-servers: a server that
// requires TLS refuses plaintext, a kubebus client with the CA (and, for
// mTLS, its certificate) connects and round-trips JetStream; a tls:// URL
// never falls back to plaintext; a TLS cluster with route authorization
// refuses a rogue server as a route while a server with the credentials joins.
import { connectBus, writesCoalesced, type BusConnection } from '@kubebus/shared/bus';
import { ErrorCodes, hasCode } from '@kubebus/shared/errors';
import { createLogger } from '@kubebus/shared/obs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { httpCall } from '../bed/http.js';
import { natsConfig, natsUrl, startNats, type NatsConfig, type NatsOptions } from '../bed/nats.js';
import { freePort } from '../bed/ports.js';
import { createPki, issueClientCert, issueNatsCert, type Pki } from '../bed/pki.js';
import type { ServerProcess } from '../bed/process.js';
import { infoOf, plaintextProbe } from '../support/plaintext-probe.js';
import { waitFor } from '../support/wait.js';

const root = mkdtempSync(join(tmpdir(), 'kubebus-nats-tls-'));
const servers: ServerProcess[] = [];
const clients: NatsConnection[] = [];
let pki: Pki;

async function server(name: string, options: NatsOptions): Promise<NatsConfig> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const config = await natsConfig(dir, { serverName: name, ...options });
  servers.push(await startNats(config));
  return config;
}

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { log: createLogger({ service: 'nats-tls-test', destination }), lines };
}

const monitor = async <T>(config: NatsConfig, path: string): Promise<T> => {
  const res = await httpCall(`http://127.0.0.1:${config.monitorPort}${path}`);
  assert.equal(res.status, 200, `${path}: ${res.body}`);
  return JSON.parse(res.body) as T;
};

const routeNames = async (config: NatsConfig) =>
  (await monitor<{ routes?: { remote_name?: string }[] }>(config, '/routez')).routes?.map(
    (route) => route.remote_name ?? '',
  ) ?? [];

before(async () => {
  mkdirSync(join(root, 'pki'));
  pki = await createPki(join(root, 'pki'));
});

after(async () => {
  await Promise.all(clients.map((nc) => nc.close()));
  await Promise.all(servers.map((s) => s.stop()));
  if (process.env['KEEP_NATS_TLS'] === undefined) rmSync(root, { recursive: true, force: true });
});

describe('a nats-server that requires TLS', { timeout: 120_000 }, () => {
  let tlsServer: NatsConfig;
  let plainServer: NatsConfig;
  before(async () => {
    const cert = await issueNatsCert(pki, 'tls-server');
    tlsServer = await server('tls-server', {
      tls: { files: { cert: cert.cert, key: cert.key, ca: pki.caCert } },
    });
    plainServer = await server('plain-server', {});
  });

  it('refuses a plaintext client (which a plaintext server serves)', async () => {
    const plain = await plaintextProbe(plainServer.port);
    assert.equal(plain.pong, true, 'the probe is answered by a plaintext server');
    const refused = await plaintextProbe(tlsServer.port);
    assert.equal(infoOf(refused.info)['tls_required'], true);
    assert.equal(refused.pong, false, 'the TLS server answered a plaintext PING');
    assert.equal(refused.hungUp, true, 'the TLS server kept a plaintext client');
  });

  it('serves a kubebus client given the CA, over TLS, through a JetStream round trip', async () => {
    const { log } = capturedLog();
    const bus: BusConnection = await connectBus(
      { servers: natsUrl(tlsServer), tls: { caFile: pki.caCert }, name: 'kubebus-tls-client' },
      log,
    );
    clients.push(bus.nc);
    // one TLS record per event-loop turn, not per task (ADR 0027)
    assert.ok(writesCoalesced(bus.nc), 'writes coalesced');
    const jsm = await jetstreamManager(bus.nc);
    await jsm.streams.add({ name: 'TLS_ROUNDTRIP', subjects: ['tls.roundtrip'] });
    const ack = await jetstream(bus.nc).publish('tls.roundtrip', 'over tls');
    const stored = await jsm.streams.getMessage('TLS_ROUNDTRIP', { seq: ack.seq });
    assert.equal(stored?.string(), 'over tls');
    const connz = await monitor<{ connections: { name?: string; tls_version?: string }[] }>(
      tlsServer,
      '/connz',
    );
    const ours = connz.connections.find((c) => c.name === 'kubebus-tls-client');
    assert.ok(ours?.tls_version, 'the server sees a TLS connection');
  });

  it("refuses, on the client's side, a server whose certificate the CA did not sign", async () => {
    mkdirSync(join(root, 'other-pki'));
    const other = await createPki(join(root, 'other-pki'));
    await assert.rejects(
      connect({
        servers: natsUrl(tlsServer),
        tls: { caFile: other.caCert },
        reconnect: false,
        timeout: 5_000,
      }),
      /certificate|signature/i,
    );
  });

  it('with a tls:// URL, refuses a plaintext server in one line, and never connects in plaintext', async () => {
    const { log } = capturedLog();
    const refusal = await connectBus(
      { servers: `tls://127.0.0.1:${plainServer.port}`, name: 'kubebus-downgrade' },
      log,
    ).then(
      (bus) => {
        clients.push(bus.nc);
        return undefined;
      },
      (error: unknown) => error,
    );
    assert.ok(hasCode(refusal, ErrorCodes.InvalidConfig), `connected: ${String(refusal)}`);
    const message = (refusal as Error).message;
    assert.match(message, /does not offer TLS/);
    assert.doesNotMatch(message, /\n/);
    const connz = await monitor<{ connections: { name?: string }[] }>(plainServer, '/connz');
    assert.equal(connz.connections.filter((c) => c.name === 'kubebus-downgrade').length, 0);
  });

  it('also with KUBEBUS_NATS_CA and a nats:// URL', async () => {
    const { log } = capturedLog();
    await assert.rejects(
      connectBus(
        { servers: natsUrl(plainServer), tls: { caFile: pki.caCert }, name: 'kubebus-ca' },
        log,
      ),
      (error: unknown) =>
        hasCode(error, ErrorCodes.InvalidConfig) && /does not offer TLS/.test(String(error)),
    );
  });
});

describe('a nats-server that verifies client certificates (mTLS)', { timeout: 120_000 }, () => {
  let mtls: NatsConfig;
  before(async () => {
    const cert = await issueNatsCert(pki, 'mtls-server');
    mtls = await server('mtls-server', {
      tls: { files: { cert: cert.cert, key: cert.key, ca: pki.caCert }, verifyClients: true },
    });
  });

  it('refuses a client without a certificate and serves one with it', async () => {
    await assert.rejects(
      connect({
        servers: natsUrl(mtls),
        tls: { caFile: pki.caCert },
        reconnect: false,
        timeout: 5_000,
      }),
    );
    const client = await issueClientCert(pki, 'kubebus-reconciler', []);
    const { log } = capturedLog();
    const bus = await connectBus(
      {
        servers: natsUrl(mtls),
        tls: { caFile: pki.caCert, certFile: client.cert, keyFile: client.key },
        name: 'kubebus-mtls',
      },
      log,
    );
    clients.push(bus.nc);
    const info = await bus.nc.request('$JS.API.INFO', '', { timeout: 5_000 });
    assert.match(info.string(), /"type":"io.nats.jetstream.api.v1.account_info_response"/);
  });
});

describe('a TLS cluster with route authorization', { timeout: 180_000 }, () => {
  const password = randomBytes(24).toString('hex');
  const ports: number[] = [];
  const nodes: NatsConfig[] = [];
  let joiner: NatsConfig;
  let rogue: NatsConfig;
  let intruder: NatsConfig;

  before(async () => {
    for (let i = 0; i < 5; i++) ports.push(await freePort());
    const [p0 = 0, p1 = 0, pJoiner = 0, pRogue = 0, pIntruder = 0] = ports;
    const files = async (name: string) => {
      const cert = await issueNatsCert(pki, name);
      return { cert: cert.cert, key: cert.key, ca: pki.caCert };
    };
    for (const node of [0, 1]) {
      nodes.push(
        await server(`node-${node}`, {
          cluster: { node, routePorts: [p0, p1] },
          routeSecurity: { tls: await files(`node-${node}`), password },
        }),
      );
    }
    const dialing = (own: number) => ({ node: 0, routePorts: [own, p0, p1] });
    [joiner, rogue, intruder] = await Promise.all([
      // a server of the cluster: the certificate and the password
      server('joiner', {
        cluster: dialing(pJoiner),
        routeSecurity: { tls: await files('joiner'), password },
      }),
      // a certificate from the cluster's CA, but not the route password
      server('rogue', {
        cluster: dialing(pRogue),
        routeSecurity: { tls: await files('rogue'), password: 'guessed' },
      }),
      // neither: plain routes, as any nats-server dials them
      server('intruder', { cluster: dialing(pIntruder) }),
    ]);
  });

  it('lets a server with the credentials join, and refuses the others as routes', async () => {
    const [node0, node1] = nodes as [NatsConfig, NatsConfig];
    const through = async (config: NatsConfig) => {
      const nc = await connect({ servers: natsUrl(config), maxReconnectAttempts: -1 });
      clients.push(nc);
      return nc;
    };
    const publisher = await through(node0);
    const received = new Map<string, number>();
    for (const [name, config] of [
      ['joiner', joiner],
      ['rogue', rogue],
      ['intruder', intruder],
    ] as const) {
      (await through(config)).subscribe('cluster.secret', {
        callback: () => {
          received.set(name, (received.get(name) ?? 0) + 1);
        },
      });
    }
    // the control: routes are formed, and carry messages to a server with the credentials
    await waitFor(
      async () =>
        (await routeNames(node0)).includes('joiner') &&
        (await routeNames(node1)).includes('joiner'),
      'the joiner to become a route of both nodes',
      60_000,
    );
    await waitFor(
      async () => {
        publisher.publish('cluster.secret', 'for the cluster only');
        await publisher.flush();
        return (received.get('joiner') ?? 0) > 0;
      },
      'a message published on node-0 to reach the joiner',
      30_000,
    );
    // both others tried, and were turned away
    const log = (config: NatsConfig) => readFileSync(config.logFile, 'utf8');
    await waitFor(
      () => /authorization violation/i.test(log(rogue)),
      'the rogue to be refused by route authorization',
      60_000,
    );
    await waitFor(
      () => /TLS route handshake error/.test(log(node0) + log(node1)),
      "the intruder's plaintext route to be refused for lacking TLS",
      60_000,
    );
    publisher.publish('cluster.secret', 'for the cluster only');
    await publisher.flush();
    for (const node of nodes) {
      const names = await routeNames(node);
      assert.ok(!names.includes('rogue'), `the rogue is a route of ${node.serverName}`);
      assert.ok(!names.includes('intruder'), `the intruder is a route of ${node.serverName}`);
    }
    assert.deepEqual(await routeNames(rogue), []);
    assert.deepEqual(await routeNames(intruder), []);
    await waitFor(
      () => (received.get('joiner') ?? 0) >= 2,
      'the last message to reach the joiner',
      30_000,
    );
    assert.equal(received.get('rogue') ?? 0, 0, 'a message reached the rogue');
    assert.equal(received.get('intruder') ?? 0, 0, 'a message reached the intruder');
  });
});
