// `kubebus dev` and the test kit against a cluster that already runs (here a
// test bed plays kind): the user's ~/.kube/config names it, dev picks it
// without being told, installs the CRD there, starts its own nats-server,
// reconciles an object to Ready, and Ctrl-C stops what dev started while the
// CRD stays. Its nats-server speaks TLS only and takes only its one user (a
// CA and a password made for this run): a plaintext client and one without
// the password are refused, while `kubebus history` and `status` reach it
// with the variables dev prints. The test kit does the same with
// KUBEBUS_USE_EXISTING_CLUSTER=1.
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectionOf } from '@kubebus/cli/commands';
import { Buckets, sweepKey } from '@kubebus/shared/bus';
import { KubeClient, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { operatorVersionOf } from '../../packages/kubebus/src/host/operator-version.js';
import { startEnvironment } from '../../packages/kubebus/src/testing/environment.js';
import { serverBinary } from '../bed/binaries.js';
import { TestBed } from '../bed/testbed.js';
import widgets, { Widget } from '../support/operators/widgets.js';
import { infoOf, plaintextProbe } from '../support/plaintext-probe.js';
import { kubebusArgs, WIDGETS_OPERATOR } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const CRD = 'widgets.test.kubebus.dev';
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;

interface Conditioned {
  readonly status?: { readonly conditions?: readonly { type: string; status: string }[] };
}
const isReady = (object: Conditioned | undefined) =>
  object?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** The variables of the `export A=b C=d` line dev prints for another terminal. */
function exportsIn(stdout: string): Record<string, string> {
  const line = /^ {2}export (.+)$/m.exec(stdout)?.[1] ?? '';
  return Object.fromEntries(
    line
      .split(' ')
      .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
}

/** `kubebus <args>` in another terminal: its exit code and output. */
async function kubebus(args: readonly string[], env: Record<string, string>) {
  const child = spawn(process.execPath, kubebusArgs(...args), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('kubebus dev on an existing cluster', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let home: string;
  let client: KubeClient;

  before(async () => {
    bed = await TestBed.start();
    // the user's own kubeconfig, at the place client-go looks when KUBECONFIG is unset
    home = mkdtempSync(join(tmpdir(), 'kubebus-home-'));
    const kubeconfig = JSON.parse(readFileSync(bed.kubeconfigPath, 'utf8')) as {
      contexts: { name: string }[];
      'current-context': string;
    };
    for (const context of kubeconfig.contexts) context.name = 'my-cluster';
    kubeconfig['current-context'] = 'my-cluster';
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), JSON.stringify(kubeconfig), { mode: 0o600 });
    client = new KubeClient(
      await loadKubeConfig(bed.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
  });

  after(async () => {
    client.close();
    await bed.stop();
    rmSync(home, { recursive: true, force: true });
  });

  /** The environment of a person's shell: no KUBECONFIG, no NATS variables, our HOME. */
  function userEnv(): Record<string, string> {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] =>
          entry[1] !== undefined &&
          entry[0] !== 'KUBECONFIG' &&
          !entry[0].startsWith('KUBEBUS_NATS_') &&
          entry[0] !== 'KUBEBUS_USE_EXISTING_CLUSTER',
      ),
    );
    // the servers are where this test found them (HOME moved, so its cache would not be)
    return {
      ...env,
      HOME: home,
      KUBEBUS_CACHE: join(home, '.cache', 'kubebus'),
      KUBEBUS_ASSETS: dirname(serverBinary('nats-server')),
    };
  }

  const widget = (name: string) => ({
    apiVersion: 'test.kubebus.dev/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'default' },
    spec: {},
  });

  const widgetPath = (name: string) =>
    `/apis/test.kubebus.dev/v1/namespaces/default/widgets/${name}`;

  it('picks the current context, reconciles an object to Ready, and stops cleanly on Ctrl-C', async () => {
    const child: ChildProcess = spawn(process.execPath, kubebusArgs('dev', WIDGETS_OPERATOR), {
      env: userEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      await waitFor(
        () => stdout.includes('is running') || child.exitCode !== null,
        'kubebus dev to say the operator is running',
        120_000,
      );
      assert.ok(stdout.includes('is running'), `stdout: ${stdout}\nstderr: ${stderr}`);
      assert.match(stdout, new RegExp(`the context my-cluster \\(${bed.apiserverUrl}\\)`));
      assert.match(stdout, /starting nats-server on loopback/);
      assert.match(stdout, new RegExp(`installed the CRD ${CRD}`));
      assert.doesNotMatch(stdout, /kube-apiserver, etcd/); // no loopback apiserver was started

      // its own nats-server, not the one of the "cluster", holds the operator's streams
      const exported = exportsIn(stdout);
      const natsUrl = exported['KUBEBUS_NATS_URL'] ?? '';
      assert.match(natsUrl, /^tls:\/\/127\.0\.0\.1:\d+$/, stdout);
      assert.notEqual(natsUrl, bed.natsUrl);
      const caFile = exported['KUBEBUS_NATS_CA'] ?? '';
      const passwordFile = exported['KUBEBUS_NATS_PASSWORD_FILE'] ?? '';
      assert.equal(exported['KUBEBUS_NATS_USER'], 'kubebus', stdout);
      assert.ok(caFile !== '' && passwordFile !== '', stdout);
      // the password is made for this run, readable by the user only, and never printed
      const password = readFileSync(passwordFile, 'utf8').trim();
      assert.match(password, /^[0-9a-f]{48}$/);
      assert.equal(statSync(passwordFile).mode & 0o777, 0o600);
      assert.equal(stdout.includes(password) || stderr.includes(password), false);

      // a plaintext client is cut off before it can send a command
      const port = Number(/:(\d+)$/.exec(natsUrl)?.[1]);
      const plain = await plaintextProbe(port);
      assert.equal(infoOf(plain.info)['tls_required'], true, plain.info);
      assert.equal(plain.pong, false, "dev's nats-server answered a plaintext PING");
      assert.equal(plain.hungUp, true, "dev's nats-server kept a plaintext client");
      // over TLS, a client without the user's password is refused
      const attempt = { servers: natsUrl, tls: { caFile }, reconnect: false, timeout: 5_000 };
      await assert.rejects(connect(attempt), /authorization violation/i);
      await assert.rejects(
        connect({ ...attempt, user: 'kubebus', pass: 'guessed' }),
        /authorization violation/i,
      );

      // with what dev printed, a client is served (the control)
      const nc = await connect(connectionOf({}, exported).options);
      try {
        const jsm = await jetstreamManager(nc);
        assert.equal((await jsm.streams.info('KUBEBUS_EVENTS')).config.name, 'KUBEBUS_EVENTS');
      } finally {
        await nc.close();
      }

      await client.request('/apis/test.kubebus.dev/v1/namespaces/default/widgets', {
        method: 'POST',
        body: widget('from-dev'),
      });
      await waitFor(
        async () => isReady(await client.getIfExists<Conditioned>(widgetPath('from-dev'))),
        'the widget to be Ready, reconciled by kubebus dev',
        60_000,
      );

      // the bus commands in another terminal reach dev's NATS with the printed variables
      const shell = { ...userEnv(), ...exported };
      const history = await kubebus(['history', CRD, 'default/from-dev'], shell);
      assert.equal(history.code, 0, history.stderr);
      assert.match(history.stdout, /^#\d+ \S+ add rv \d+ generation 1 \(watch\)$/m);
      const status = await kubebus(['status', CRD, 'default/from-dev'], shell);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^Ready +True/m);

      const natsOptions = connectionOf({}, exported).options;
      child.kill('SIGINT');
      const [code] = await exited;
      assert.equal(code, 0, stderr);
      assert.match(stdout, new RegExp(`the CRD ${CRD} stays in the cluster`));
      assert.equal(stderr.includes('    at '), false, stderr); // no stack trace
      assert.notEqual(await client.getIfExists(CRD_PATH), undefined);
      // the nats-server dev started is gone with it
      await assert.rejects(connect({ ...natsOptions, reconnect: false, timeout: 2_000 }));
      // its logs stay to be read; its password and keys do not
      const runDir = dirname(passwordFile);
      assert.equal(existsSync(passwordFile), false);
      assert.deepEqual(
        readdirSync(runDir).filter((name) => name.endsWith('.key')),
        [],
      );
      assert.ok(
        readdirSync(runDir).some((name) => name.endsWith('.log')),
        runDir,
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('keeps the cluster’s NATS store across runs: a second run has the first one’s history', async () => {
    const child = spawn(process.execPath, kubebusArgs('dev', WIDGETS_OPERATOR), {
      env: userEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit');
    try {
      await waitFor(
        () => stdout.includes('is running') || child.exitCode !== null,
        'kubebus dev to run again',
        120_000,
      );
      assert.ok(stdout.includes('is running'), `stdout: ${stdout}\nstderr: ${stderr}`);
      const store = /^NATS store: (\S+) /m.exec(stdout)?.[1] ?? '';
      assert.ok(store.startsWith(join(home, '.cache', 'kubebus', 'dev')), stdout);
      // what the first run recorded of the object it reconciled is still on the bus
      const history = await kubebus(['history', CRD, 'default/from-dev'], {
        ...userEnv(),
        ...exportsIn(stdout),
      });
      assert.equal(history.code, 0, history.stderr);
      assert.match(history.stdout, /^#1 \S+ add rv \d+ generation 1 \(watch\)$/m);
      // the runs swept as the version `kubebus run` of the same file has: switching between
      // dev and run sweeps nothing again
      const nc = await connect(connectionOf({}, exportsIn(stdout)).options);
      try {
        const agreements = await new Kvm(nc).open(Buckets.agreements);
        const swept = await agreements.get(sweepKey(widgets.name, 0));
        assert.equal(
          swept?.json<{ version?: string }>().version,
          operatorVersionOf(resolve(WIDGETS_OPERATOR), widgets, undefined),
        );
      } finally {
        await nc.close();
      }
      child.kill('SIGINT');
      await exited;
      // held while it ran, and let go
      assert.equal(existsSync(join(store, 'lock')), false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('--cluster existing says in one line what to do when the context does not answer', async () => {
    const env = userEnv();
    const child = spawn(
      process.execPath,
      kubebusArgs('dev', WIDGETS_OPERATOR, '--cluster', 'existing', '--context', 'nowhere'),
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 2);
    assert.match(
      stderr.trim(),
      /^kubebus: --cluster existing: the kubeconfig .* cannot be used \(it has no context named nowhere\); start the cluster, pick another with --context, or use --cluster local$/,
    );
  });

  it('the test kit runs there too with KUBEBUS_USE_EXISTING_CLUSTER=1, and waitFor reports what it saw', async () => {
    const env = await startEnvironment({}, { ...userEnv(), KUBEBUS_USE_EXISTING_CLUSTER: '1' });
    try {
      assert.equal(env.cluster, 'existing');
      assert.equal(env.context, 'my-cluster');
      assert.equal(env.apiserverUrl, bed.apiserverUrl);
      assert.notEqual(env.natsUrl, bed.natsUrl);
      // the kit's nats-server is dev's: TLS with a CA and a user made for this run
      assert.match(env.natsUrl, /^tls:\/\//);
      assert.deepEqual(Object.keys(env.natsEnv).sort(), [
        'KUBEBUS_NATS_CA',
        'KUBEBUS_NATS_PASSWORD_FILE',
        'KUBEBUS_NATS_URL',
        'KUBEBUS_NATS_USER',
      ]);
      await env.install(Widget);
      await env.run(widgets);
      await env.apply(widget('from-kit'));
      const ready = await env.waitFor(Widget, 'from-kit', isReady, { timeoutMs: 60_000 });
      assert.equal(ready?.metadata.name, 'from-kit');

      await assert.rejects(
        env.waitFor(Widget, 'from-kit', (w) => w?.metadata.labels?.['never'] === 'set', {
          timeoutMs: 500,
          what: 'the label never=set',
        }),
        (error: Error) => {
          assert.match(
            error.message,
            /^timed out after 500 ms waiting for Widget default\/from-kit \(test\.kubebus\.dev\/v1\) to satisfy the label never=set; last seen: \{"apiVersion":"test\.kubebus\.dev\/v1","kind":"Widget"/,
          );
          // the status as it was, Ready included (the apiserver sorts the keys)
          assert.match(error.message, /"reason":"Reconciled","status":"True","type":"Ready"/);
          return true;
        },
      );
      await env.delete(Widget, 'from-kit');
      assert.equal(await env.waitFor(Widget, 'from-kit', (w) => w === undefined), undefined);
    } finally {
      await env.stop();
    }
    // stop() leaves the cluster as it was given, CRD included
    assert.notEqual(await client.getIfExists(CRD_PATH), undefined);
  });
});
