// The kubebus CLI against real servers: an object's history as the watcher
// recorded it, and the DLQ listed, inspected and re-driven.
import {
  Buckets,
  Streams,
  WorkMarkSchema,
  agreementKeys,
  deadLetter,
  origins,
  partitionOf,
  publishDeadLetter,
  subjects,
} from '@kubebus/shared/bus';
import { Kvm } from '@nats-io/kv';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { TEST_GROUP, installCrd, objects, widget, widgetCrd } from '../support/kube.js';
import { ServiceProcess, WIDGETS_OPERATOR } from '../support/services.js';
import { readEvents, readLastPerSubject } from '../support/stream.js';
import { waitFor } from '../support/wait.js';

/** The environment without the NATS variables (a person's shell may have them). */
function withoutNats(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !entry[0].startsWith('KUBEBUS_NATS_'),
    ),
  );
}

describe('kubebus CLI', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let watcher: ServiceProcess;

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installCrd(bed.kubeConfig(), widgetCrd);
    watcher = await ServiceProcess.start(bed, 'watcher', {}, { operator: WIDGETS_OPERATOR });
  });

  after(async () => {
    await watcher.stop();
    await nc.close();
    await bed.stop();
  });

  const kubebus = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
      {
        encoding: 'utf8',
        env: { ...process.env, KUBEBUS_NATS_URL: bed.natsUrl },
        timeout: 60_000,
      },
    );

  it('shows every recorded revision of an object, with what changed', async () => {
    const api = objects(bed.kubeConfig());
    await api.create(widget('w.one', { size: 1 }));
    await api.patch(
      widget('w.one', { size: 2 }),
      undefined,
      undefined,
      'test',
      true,
      'application/apply-patch+yaml',
    );
    await api.delete(widget('w.one', {}));
    await waitFor(
      async () =>
        (await readEvents(nc, `kubebus.events.test_kubebus_dev.widgets.default.w_one`)).length ===
        3,
      'three revisions',
    );
    // any role may publish under kubebus.dlq: a letter that is not one is left out, not fatal
    await jetstream(nc).publish(
      'kubebus.dlq.forger.test_kubebus_dev.widgets.default.w_one',
      new TextEncoder().encode('not json {'),
    );
    const result = kubebus('history', `widgets.${TEST_GROUP}`, 'default/w.one');
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^#\d+ \S+ add rv \d+ generation 1 \(watch\)$/);
    assert.ok(
      lines.some((line) => /update rv \d+ generation 2/.test(line)),
      result.stdout,
    );
    assert.ok(lines.includes('    spec.size: 1 → 2'), result.stdout);
    assert.ok(
      lines.some((line) => / delete rv /.test(line)),
      result.stdout,
    );
    // a name nothing on the bus knows (misspelt): said, and not a success
    const unknown = kubebus('history', `widgets.${TEST_GROUP}`, 'default/w.none');
    assert.equal(unknown.status, 1, unknown.stderr);
    assert.match(unknown.stdout, /^no recorded history: nothing on the bus names this object/);
    // a bare name of a namespaced kind, with an apiserver to say it is namespaced: which
    // namespace is asked for, not "nothing recorded"
    for (const command of ['history', 'status']) {
      const bare = spawnSync(
        process.execPath,
        [
          '--conditions=source',
          '--import',
          'tsx',
          'packages/kubebus/src/cli/main.ts',
          command,
          `widgets.${TEST_GROUP}`,
          'w.one',
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, KUBEBUS_NATS_URL: bed.natsUrl, KUBECONFIG: bed.kubeconfigPath },
          timeout: 60_000,
        },
      );
      assert.equal(bare.status, 2, bare.stderr);
      assert.equal(
        bare.stderr.trim(),
        `kubebus: widgets.${TEST_GROUP} is namespaced: name the object as <namespace>/w.one (for example default/w.one)`,
      );
    }
  });

  it('lists, inspects and re-drives dead letters', async () => {
    const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'default', name: 'stuck' };
    // the widgets operator's watcher registered its 4 work partitions
    const workSubject = subjects.work('widgets', partitionOf(key, 4), key);
    await publishDeadLetter(
      jetstream(nc),
      deadLetter({
        origin: 'widgets',
        key,
        reason: 'boom after 10 attempts',
        code: 'KUBEBUS_KUBE_API',
        // a forged letter's subject: redrive goes where the key and origin say, never here
        subject: subjects.work('someone-else', 0, key),
        attempts: 10,
      }),
    );
    const list = kubebus('dlq', 'list');
    assert.equal(list.status, 0, list.stderr);
    const line = list.stdout.split('\n').find((l) => l.includes('default/stuck'));
    assert.match(
      line ?? '',
      /^#(\d+) .* widgets widgets\.test\.kubebus\.dev\/default\/stuck \(KUBEBUS_KUBE_API, 10 attempts\): boom/,
    );
    const seq = /^#(\d+)/.exec(line ?? '')?.[1] ?? '';

    const inspect = kubebus('dlq', 'inspect', seq);
    assert.equal(
      (JSON.parse(inspect.stdout) as { letter: { reason: string } }).letter.reason,
      'boom after 10 attempts',
    );

    const yaml = kubebus('dlq', 'inspect', seq, '-o', 'yaml');
    assert.match(yaml.stdout, /^letter:\n {2}.*\n(.*\n)* {2}reason: boom after 10 attempts$/m);
    const badFormat = kubebus('dlq', 'inspect', seq, '-o', 'xml');
    assert.equal(badFormat.status, 2);
    assert.match(badFormat.stderr, /^kubebus: -o "xml" is not an output format; use -o table/);

    const redrive = kubebus('dlq', 'redrive', seq);
    assert.equal(redrive.status, 0, redrive.stderr);
    const [mark] = await readLastPerSubject(nc, Streams.work, workSubject);
    assert.ok(mark, 'the work mark is back, on the subject its key and origin give');
    assert.deepEqual(
      await readLastPerSubject(nc, Streams.work, subjects.work('someone-else', 0, key)),
      [],
      'nothing went to the subject the letter named',
    );
    const parsed = WorkMarkSchema.parse(JSON.parse(new TextDecoder().decode(mark.data)));
    assert.equal(parsed.reason, 'redrive');
    assert.deepEqual(parsed.key, key);
    const jsm = await jetstreamManager(nc);
    assert.equal(
      await jsm.streams.getMessage(Streams.deadLetters, { seq: Number(seq) }).catch(() => null),
      null,
    );
  });

  it('re-drives nothing a letter forges: another origin, an event from a controller', async () => {
    const js = jetstream(nc);
    const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'forged', name: 'victim' };
    const forgedEvent = Buffer.from('{"specversion":"1.0"}').toString('base64');
    // a controller's letter asking to put an "event" into KUBEBUS_EVENTS
    await publishDeadLetter(
      js,
      deadLetter({
        origin: 'widgets',
        key,
        reason: 'forged',
        code: 'KUBEBUS_KUBE_API',
        subject: subjects.event(key),
        payload: forgedEvent,
        attempts: 1,
      }),
    );
    // a letter saying it is the watcher's, stored on a controller's DLQ subject
    const claimed = deadLetter({
      origin: 'watcher',
      key,
      reason: 'forged origin',
      code: 'KUBEBUS_KUBE_API',
      subject: subjects.event(key),
      payload: forgedEvent,
      attempts: 1,
    });
    await js.publish(subjects.deadLetter('widgets', key), JSON.stringify(claimed));
    const seqs = kubebus('dlq', 'list', '--limit', '1000')
      .stdout.split('\n')
      .filter((line) => line.includes('forged/victim'))
      .map((line) => /^#(\d+)/.exec(line)?.[1] ?? '');
    assert.equal(seqs.length, 2);
    for (const seq of seqs) {
      const result = kubebus('dlq', 'redrive', seq);
      assert.equal(result.status, 1, result.stdout);
      assert.match(result.stderr, /not re-driven/);
    }
    assert.deepEqual(
      await readEvents(nc, subjects.event(key)),
      [],
      'nothing reached KUBEBUS_EVENTS',
    );
  });

  it("re-drives a status writer's letter only into its own operator's status", async () => {
    const js = jetstream(nc);
    const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'intents', name: 'victim' };
    // widgets' status writers registered one status partition
    await (
      await new Kvm(nc).open(Buckets.agreements)
    ).put(
      agreementKeys.status('widgets'),
      JSON.stringify({ partitions: 1, registeredBy: 'test', at: new Date().toISOString() }),
    );
    const target = subjects.status('widgets', 0, key);
    const payload = Buffer.from(JSON.stringify({ key, status: { forged: true } })).toString(
      'base64',
    );
    const letterOf = (origin: string) =>
      deadLetter({
        origin,
        key,
        reason: 'rejected',
        code: 'KUBEBUS_KUBE_API',
        subject: target,
        attempts: 1,
        payload,
      });
    // another operator's status writer, on its own subject, naming widgets' status
    await publishDeadLetter(js, letterOf(origins.statusWriter('other')));
    // widgets' own, the control
    await publishDeadLetter(js, letterOf(origins.statusWriter('widgets')));
    const seqOf = (origin: string) =>
      kubebus('dlq', 'list', '--origin', origin)
        .stdout.split('\n')
        .map((line) => (line.includes('intents/victim') ? /^#(\d+)/.exec(line)?.[1] : undefined))
        .find((seq) => seq !== undefined) ?? '';
    const refused = kubebus('dlq', 'redrive', seqOf(origins.statusWriter('other')));
    assert.equal(refused.status, 1, refused.stdout);
    assert.match(refused.stderr, /the status writer of other does not write widgets's status/);
    assert.deepEqual(await readLastPerSubject(nc, Streams.status, target), []);
    const allowed = kubebus('dlq', 'redrive', seqOf(origins.statusWriter('widgets')));
    assert.equal(allowed.status, 0, allowed.stderr);
    const [intent] = await readLastPerSubject(nc, Streams.status, target);
    assert.ok(intent, "the intent is back on widgets' status");
  });

  it('filters and pages dead letters, and re-drives all that match', async () => {
    const js = jetstream(nc);
    const park = (origin: string, name: string, code: string) => {
      const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'paged', name };
      return publishDeadLetter(
        js,
        deadLetter({
          origin,
          key,
          reason: `${name} failed`,
          code,
          subject: subjects.work(origin, 0, key),
          attempts: 3,
        }),
      );
    };
    // the controllers these letters came from registered one partition each
    const agreements = await new Kvm(nc).open(Buckets.agreements);
    for (const controller of ['pager', 'other'])
      await agreements.put(
        agreementKeys.work(controller),
        JSON.stringify({ partitions: 1, registeredBy: 'test', at: new Date().toISOString() }),
      );
    await park('pager', 'p1', 'KUBEBUS_KUBE_API');
    await park('pager', 'p2', 'KUBEBUS_RECONCILE_FAILED');
    await park('pager', 'p3', 'KUBEBUS_KUBE_API');
    await park('other', 'o1', 'KUBEBUS_KUBE_API');
    const names = (result: { stdout: string }) =>
      [...result.stdout.matchAll(/paged\/(\w+)/g)].map((match) => match[1]);

    assert.deepEqual(names(kubebus('dlq', 'list', '--origin', 'pager')), ['p1', 'p2', 'p3']);
    assert.deepEqual(
      names(kubebus('dlq', 'list', '--origin', 'pager', '--code', 'KUBEBUS_KUBE_API')),
      ['p1', 'p3'],
    );
    const first = kubebus('dlq', 'list', '--origin', 'pager', '--limit', '1');
    assert.deepEqual(names(first), ['p1']);
    const after = /^#(\d+)/.exec(first.stdout)?.[1] ?? '';
    assert.deepEqual(
      names(kubebus('dlq', 'list', '--origin', 'pager', '--after', after, '--limit', '1')),
      ['p2'],
    );
    assert.deepEqual(names(kubebus('dlq', 'list', '--origin', 'pager', '--since', '1h')), [
      'p1',
      'p2',
      'p3',
    ]);
    assert.deepEqual(names(kubebus('dlq', 'list', '--since', '2999-01-01T00:00:00Z')), []);
    const badSince = kubebus('dlq', 'list', '--since', 'yesterday');
    assert.equal(badSince.status, 2);
    assert.match(
      badSince.stderr,
      /^kubebus: --since "yesterday" is neither a duration nor a time; /,
    );

    const all = kubebus(
      'dlq',
      'redrive',
      '--all',
      '--origin',
      'pager',
      '--code',
      'KUBEBUS_KUBE_API',
    );
    assert.equal(all.status, 0, all.stderr);
    assert.match(all.stdout, /^re-drove 2 of 2 dead letters$/m);
    assert.match(all.stderr, /re-drove 2\/2/);
    assert.deepEqual(names(kubebus('dlq', 'list', '--origin', 'pager')), ['p2']);
    assert.deepEqual(names(kubebus('dlq', 'list', '--origin', 'other')), ['o1']);
  });

  it('says which letters were reconciled since, and nothing to re-drive for those', async () => {
    const js = jetstream(nc);
    const parkedAt = new Map<string, number>();
    const park = async (name: string) => {
      const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'recovered', name };
      const letter = deadLetter({
        origin: 'mender',
        key,
        reason: `${name} failed`,
        code: 'KUBEBUS_RECONCILE_FAILED',
        subject: subjects.work('mender', 0, key),
        attempts: 3,
      });
      parkedAt.set(name, Date.parse(letter.time));
      await publishDeadLetter(js, letter);
    };
    /** An outcome record of the letter's controller, `ms` after the letter. */
    const outcome = async (name: string, result: string, ms: number) => {
      const key = { group: TEST_GROUP, resource: 'widgets', namespace: 'recovered', name };
      const at = new Date((parkedAt.get(name) ?? 0) + ms).toISOString();
      await js.publish(
        subjects.outcome('mender', key),
        JSON.stringify({
          controller: 'mender',
          result,
          ms: 5,
          attempt: 1,
          reconcileId: `r-${name}-${String(ms)}`,
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          ...(result === 'skipped' ? { note: 'the object no longer exists' } : {}),
          at,
        }),
      );
    };
    for (const name of ['fixed', 'failing', 'quiet', 'untouched']) await park(name);
    // a spec change reconciled it after the letter
    await outcome('fixed', 'success', 1_000);
    // got through before its letter, fails since
    await outcome('failing', 'success', -60_000);
    await outcome('failing', 'error', 2_000);
    // got through, then a round that did nothing: the last record alone does not say
    await outcome('quiet', 'success', 1_000);
    await outcome('quiet', 'skipped', 2_000);

    const list = kubebus('dlq', 'list', '--origin', 'mender');
    assert.equal(list.status, 0, list.stderr);
    const lineOf = (name: string) =>
      list.stdout.split('\n').find((line) => line.includes(`recovered/${name} `)) ?? '';
    for (const name of ['fixed', 'quiet'])
      assert.match(
        lineOf(name),
        /: \w+ failed \[reconciled since \d{4}-\d\d-\d\dT[\d:.]+Z: nothing to re-drive\]$/,
        name,
      );
    for (const name of ['failing', 'untouched']) assert.match(lineOf(name), /: \w+ failed$/, name);
    // and in the machine form
    const json = kubebus('dlq', 'list', '--origin', 'mender', '-o', 'json');
    const letters = JSON.parse(json.stdout) as {
      letter: { key: { name: string } };
      reconciledSince?: string;
    }[];
    assert.deepEqual(
      letters.filter((l) => l.reconciledSince !== undefined).map((l) => l.letter.key.name),
      ['fixed', 'quiet'],
    );
  });

  it('tails changes as they are published, filtered, with the trace id', async () => {
    // the kind as a person types it, resolved through discovery as status and history do
    const follower = spawn(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        'packages/kubebus/src/cli/main.ts',
        'tail',
        'Widget',
        '--name',
        'w.tailed',
      ],
      {
        env: { ...process.env, KUBEBUS_NATS_URL: bed.natsUrl, KUBECONFIG: bed.kubeconfigPath },
      },
    );
    let out = '';
    let err = '';
    follower.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    follower.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = once(follower, 'exit');
    try {
      await waitFor(() => err.includes('following'), 'tail to start following', 60_000);
      assert.match(err, /following kubebus\.events\.test_kubebus_dev\.widgets\./);
      const api = objects(bed.kubeConfig());
      await api.create(widget('w.ignored', { size: 1 }));
      await api.create(widget('w.tailed', { size: 1 }));
      await waitFor(() => out.includes('w.tailed'), 'the tailed change', 60_000);
      const [line] = out.trim().split('\n');
      assert.match(
        line ?? '',
        /^\S+ add {4}widgets\.test\.kubebus\.dev\/default\/w\.tailed rv \d+ generation 1 \(watch\) trace [0-9a-f]{32}$/,
      );
      assert.doesNotMatch(out, /w\.ignored/);
    } finally {
      follower.kill('SIGINT');
    }
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0, err);
  });

  it('shows each consumer lag: pending, ack pending, and the age of the oldest', async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(Streams.work, {
      durable_name: 'lagdemo_p0',
      filter_subject: 'kubebus.work.lagdemo.p0.>',
      ack_policy: AckPolicy.Explicit,
    });
    const js = jetstream(nc);
    for (const name of ['a', 'b', 'c'])
      await js.publish(`kubebus.work.lagdemo.p0.~.things.default.${name}`, '{}');
    const consumer = await js.consumers.get(Streams.work, 'lagdemo_p0');
    const taken = await consumer.next(); // delivered, never acknowledged
    assert.ok(taken);
    const result = kubebus('lag', '--json');
    assert.equal(result.status, 0, result.stderr);
    const lag = (
      JSON.parse(result.stdout) as {
        consumer: string;
        pending: number;
        ackPending: number;
        oldestMs?: number;
      }[]
    ).find((l) => l.consumer === 'lagdemo_p0');
    assert.ok(lag, result.stdout);
    assert.equal(lag.pending, 2);
    assert.equal(lag.ackPending, 1);
    assert.ok((lag.oldestMs ?? -1) >= 0, result.stdout);
    const table = kubebus('lag');
    assert.match(table.stdout, /^STREAM +CONSUMER +PENDING +ACK PENDING +REDELIVERED +OLDEST$/m);
    assert.match(table.stdout, /^KUBEBUS_WORK +lagdemo_p0 +2 +1 +0 +\S+$/m);
  });

  it('connects from flags or a nats context as well as the environment', () => {
    const run = (args: string[], env: Record<string, string>) =>
      spawnSync(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', ...args],
        { encoding: 'utf8', env: { ...withoutNats(process.env), ...env }, timeout: 60_000 },
      );
    const config = mkdtempSync(join(tmpdir(), 'kubebus-nats-context-'));
    mkdirSync(join(config, 'nats', 'context'), { recursive: true });
    writeFileSync(
      join(config, 'nats', 'context', 'bed.json'),
      JSON.stringify({ url: bed.natsUrl }),
    );
    const noContext = { XDG_CONFIG_HOME: join(config, 'empty') };

    const flag = run(['lag', '--server', bed.natsUrl], noContext);
    assert.equal(flag.status, 0, flag.stderr);
    assert.match(flag.stdout, /^STREAM +CONSUMER/m);

    const named = run(['lag', '--context', 'bed'], { XDG_CONFIG_HOME: config });
    assert.equal(named.status, 0, named.stderr);
    writeFileSync(join(config, 'nats', 'context.txt'), 'bed\n');
    const selected = run(['lag'], { XDG_CONFIG_HOME: config });
    assert.equal(selected.status, 0, selected.stderr);

    const missing = run(['lag', '--context', 'nope'], { XDG_CONFIG_HOME: config });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^kubebus: no nats context "nope"/);
    const nothing = run(['lag'], noContext);
    assert.equal(nothing.status, 2);
    assert.match(nothing.stderr, /^kubebus: no NATS server; give --server/);
    const unreachable = run(['lag', '--server', 'nats://127.0.0.1:1'], noContext);
    assert.equal(unreachable.status, 1);
    assert.equal(unreachable.stderr.trim().split('\n').length, 1, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1 \(from --server\)/,
    );
    // a URL with its user and password in it: said without them
    const withPassword = run(['lag', '--server', 'nats://alice:hunter2@127.0.0.1:1'], noContext);
    assert.equal(withPassword.status, 1);
    assert.doesNotMatch(withPassword.stderr, /hunter2/);
    assert.match(
      withPassword.stderr,
      /cannot connect to NATS at nats:\/\/\[redacted\]@127\.0\.0\.1:1/,
    );
  });

  it('replays through the same connection: a nats context, or --server', () => {
    const config = mkdtempSync(join(tmpdir(), 'kubebus-nats-context-'));
    mkdirSync(join(config, 'nats', 'context'), { recursive: true });
    writeFileSync(
      join(config, 'nats', 'context', 'bed.json'),
      JSON.stringify({ url: bed.natsUrl }),
    );
    const replay = (args: string[], env: Record<string, string>) =>
      spawnSync(
        process.execPath,
        [
          '--conditions=source',
          '--import',
          'tsx',
          'packages/kubebus/src/cli/main.ts',
          'replay',
          WIDGETS_OPERATOR,
          'default/never-recorded',
          ...args,
        ],
        {
          encoding: 'utf8',
          env: { ...withoutNats(process.env), KUBECONFIG: bed.kubeconfigPath, ...env },
          timeout: 60_000,
        },
      );
    const viaContext = replay(['--context', 'bed'], { XDG_CONFIG_HOME: config });
    assert.equal(viaContext.status, 0, viaContext.stderr);
    const unreachable = replay(['--server', 'nats://127.0.0.1:1'], {
      XDG_CONFIG_HOME: join(config, 'empty'),
    });
    assert.equal(unreachable.status, 1, unreachable.stderr);
    assert.equal(unreachable.stderr.trim().split('\n').length, 1, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      /^kubebus: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1 \(from --server\): .*; check the server/,
    );
  });

  it('fails with a clear message for a bad command or configuration', () => {
    const unknown = kubebus('frobnicate');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command/);
    // per-command help and options, answered before any connection is tried
    const help = kubebus('dlq', 'list', '--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: kubebus dlq list \[--origin/);
    assert.doesNotMatch(help.stdout, /kubebus history/);
    const misplaced = kubebus('lag', '--origin', 'reconciler');
    assert.equal(misplaced.status, 2);
    assert.equal(
      misplaced.stderr,
      'kubebus: lag takes no --origin; kubebus lag --help lists its options\n',
    );
    const noNats = spawnSync(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'packages/kubebus/src/cli/main.ts', 'dlq', 'list'],
      {
        encoding: 'utf8',
        env: { ...process.env, KUBEBUS_NATS_URL: 'localhost' },
      },
    );
    assert.equal(noNats.status, 2);
    assert.match(noNats.stderr, /KUBEBUS_NATS_URL/);
  });
});
