// kubebus as an operator author gets it: `npm pack`, a project in a temporary
// directory outside the repository with only the tarball and zod installed,
// the small StaticSite operator written there, `kubebus generate`, then
// `kubebus run` — all roles in one process, and again one role per process,
// each under its own service account bound to the generated RBAC — against a
// real kube-apiserver and nats-server. kubebus' own source is not touched.
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { httpCall } from '../bed/http.js';
import { TestBed } from '../bed/testbed.js';
import { runBuildStage } from '../support/dockerfile-build-stage.js';
import { ServiceProcess } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const SITES = { group: 'sites.example.com', version: 'v1', plural: 'staticsites' };
const NAMESPACE = 'default';

interface Site {
  metadata: { name: string; generation: number };
  status?: {
    url?: string;
    readyReplicas?: number;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

/** Creates each document of a YAML file as the admin (kinds kubebus generate writes). */
async function applyFile(bed: TestBed, file: string): Promise<void> {
  const paths: Record<string, (namespace: string) => string> = {
    CustomResourceDefinition: () => '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
    ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
    RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
  };
  for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const object = document.toJSON() as { kind: string; metadata: { namespace?: string } };
    const path = paths[object.kind]?.(object.metadata.namespace ?? '');
    assert.ok(path, `kubebus generate wrote an unexpected kind ${object.kind}`);
    const answer = await httpCall(`${bed.apiserverUrl}${path}`, {
      method: 'POST',
      body: JSON.stringify(object),
      tls: bed.adminTls,
    });
    // the metrics-auth ClusterRoles and their bindings are the same in every
    // generated layout: a second file applies them again
    const again = answer.status === 409 && object.kind.startsWith('Cluster');
    assert.ok(answer.status === 201 || again, `${object.kind} refused: ${answer.body}`);
  }
}

/** Whether the apiserver's RBAC lets a service account do this (a SubjectAccessReview). */
async function allowed(
  bed: TestBed,
  account: { readonly namespace: string; readonly name: string },
  attributes: Readonly<Record<string, string>>,
): Promise<boolean> {
  const answer = await httpCall(
    `${bed.apiserverUrl}/apis/authorization.k8s.io/v1/subjectaccessreviews`,
    {
      method: 'POST',
      body: JSON.stringify({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${account.namespace}:${account.name}`,
          groups: [
            'system:serviceaccounts',
            `system:serviceaccounts:${account.namespace}`,
            'system:authenticated',
          ],
          resourceAttributes: attributes,
        },
      }),
      tls: bed.adminTls,
    },
  );
  return (JSON.parse(answer.body) as { status: { allowed: boolean } }).status.allowed;
}

describe('the kubebus package, installed in a project of its own', { timeout: 900_000 }, () => {
  let bed: TestBed;
  let project: string;
  let kubebus: string;
  let tarball: string;
  const sites = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);

  const site = async (name: string) =>
    (await sites().getNamespacedCustomObject({ ...SITES, namespace: NAMESPACE, name })) as Site;
  const ready = async (name: string) =>
    (await site(name)).status?.conditions?.find((c) => c.type === 'Ready');
  const createSite = (name: string, spec: Record<string, unknown>) =>
    sites().createNamespacedCustomObject({
      ...SITES,
      namespace: NAMESPACE,
      body: { apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name }, spec },
    });
  /** the kubelet's part: the Deployment reports its pods ready */
  const podsReady = async (name: string, replicas: number) => {
    await waitFor(
      () =>
        bed
          .kubeConfig()
          .makeApiClient(AppsV1Api)
          .readNamespacedDeployment({ namespace: NAMESPACE, name })
          .then(() => true),
      `the Deployment ${name}`,
      120_000,
    );
    await bed
      .kubeConfig()
      .makeApiClient(AppsV1Api)
      .patchNamespacedDeploymentStatus(
        {
          namespace: NAMESPACE,
          name,
          body: { status: { replicas, readyReplicas: replicas, availableReplicas: replicas } },
        },
        mergePatch,
      );
  };
  const cli = (args: readonly string[], env: Readonly<Record<string, string>> = {}) =>
    run(kubebus, [...args], {
      cwd: project,
      env: {
        ...process.env,
        KUBECONFIG: bed.kubeconfigPath,
        KUBEBUS_NATS_URL: bed.natsUrl,
        ...env,
      },
      timeout: 120_000,
    });
  const operator = (roleArgs: readonly string[], env: Readonly<Record<string, string>>) =>
    ServiceProcess.launch(
      bed,
      `kubebus-${roleArgs.at(-1) ?? 'all'}`,
      [
        join(project, 'node_modules', 'kubebus', 'dist', 'cli.js'),
        'run',
        'operator.ts',
        ...roleArgs,
      ],
      {
        KUBEBUS_BACKOFF_BASE: '100ms',
        KUBEBUS_BACKOFF_CAP: '1s',
        KUBEBUS_OBJECT_ATTEMPTS: '3',
        ...env,
      },
      { cwd: project, waitReady: true },
    );

  before(async () => {
    bed = await TestBed.start();
    const packed = mkdtempSync(join(tmpdir(), 'kubebus-pack-'));
    await run('npm', ['pack', '--workspace', 'kubebus', '--pack-destination', packed], {
      cwd: root,
      timeout: 300_000,
    });
    const packedFile = readdirSync(packed).find((file) => file.endsWith('.tgz'));
    assert.ok(packedFile, 'npm pack made no tarball');
    tarball = join(packed, packedFile);
    project = mkdtempSync(join(tmpdir(), 'kubebus-project-'));
    const zod = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies['zod'];
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'my-operator',
        private: true,
        type: 'module',
        dependencies: { kubebus: `file:${tarball}`, zod },
      }),
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: project,
      timeout: 300_000,
    });
    copyFileSync(join(root, 'examples', 'staticsite', 'operator.ts'), join(project, 'operator.ts'));
    kubebus = join(project, 'node_modules', '.bin', 'kubebus');

    // the kustomize base, the Helm chart and the NATS users, for the namespace the roles run in here
    await cli(['generate', 'operator.ts', '--out', 'generated', '--namespace', 'kubebus']);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'kubebus' } } });
    await applyFile(
      bed,
      join(project, 'generated', 'kustomize', 'staticsites.sites.example.com.yaml'),
    );
    await applyFile(bed, join(project, 'generated', 'kustomize', 'rbac.yaml'));
    await waitFor(async () => {
      const crd = await bed
        .kubeConfig()
        .makeApiClient(ApiextensionsV1Api)
        .readCustomResourceDefinition({ name: 'staticsites.sites.example.com' });
      return (crd.status?.conditions ?? []).some(
        (c) => c.type === 'Established' && c.status === 'True',
      );
    }, 'the generated CRD to be Established');
  });

  after(async () => {
    await bed?.stop();
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });

  it('has built JS, types and a bin, and generates what the definition needs', async () => {
    const installed = join(project, 'node_modules', 'kubebus');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
    };
    assert.equal(manifest.exports['.']?.['types'], './dist/index.d.ts');
    assert.match(readFileSync(join(installed, 'dist', 'index.d.ts'), 'utf8'), /defineOperator/);
    // no TypeScript source ships: the package runs on plain node
    assert.ok(!readdirSync(installed).includes('src'));
    // the reconciler's verbs follow `owns`: it may create, patch and delete (prune) what it owns, no wildcard
    const rbac = readFileSync(join(project, 'generated', 'kustomize', 'rbac.yaml'), 'utf8');
    assert.match(rbac, /name: kubebus-staticsite-reconciler/);
    assert.doesNotMatch(rbac, /\*/);
    const nats = readFileSync(join(project, 'generated', 'nats', 'nats-users.conf'), 'utf8');
    // its work partitions' and waiting requeues' subjects only: none no consumer takes
    assert.match(nats, /"kubebus\.work\.staticsite\.p0\.>"/);
    assert.match(nats, /"kubebus\.work\.staticsite\.later\.>"/);
    assert.doesNotMatch(nats, /"kubebus\.work\.staticsite\.>"/);
    // the client's version, and the servers' it is pointed at
    const { stdout } = await cli(['version']);
    assert.match(stdout, /^kubebus \d+\.\d+\.\d+ \(node v\d+/);
    assert.match(stdout, /^nats-server 2\.\d+\.\d+ \(nats:\/\//m);
    assert.match(stdout, /^kube-apiserver v1\.\d+\.\d+/m);
  });

  it('runs TypeScript through Node, without tsx, from an ES module or a CommonJS project', async () => {
    // tsx is an optional peer: installing kubebus and zod brings none
    assert.ok(!existsSync(join(project, 'node_modules', 'tsx')), 'installing kubebus brought tsx');
    // what `npm init -y` writes ("type": "commonjs") around an operator.ts with import/export
    const commonjs = join(project, 'commonjs');
    mkdirSync(commonjs);
    writeFileSync(join(commonjs, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    copyFileSync(join(project, 'operator.ts'), join(commonjs, 'operator.ts'));
    const { stdout, stderr } = await cli(['generate', 'commonjs/operator.ts']);
    assert.match(stdout, /^ {2}name: staticsites\.sites\.example\.com$/m);
    assert.equal(stderr, '');
    // what type stripping cannot run: one line naming the way out
    writeFileSync(
      join(project, 'enum.ts'),
      `${readFileSync(join(project, 'operator.ts'), 'utf8')}\nexport enum Colour {\n  Red,\n}\n`,
    );
    const refused = await cli(['generate', 'enum.ts']).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.ok(refused, 'an operator with an enum loaded without tsx');
    assert.equal(refused.code, 2);
    const lines = (refused.stderr ?? '').trim().split('\n');
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(lines[0] ?? '', /^kubebus: cannot load enum\.ts .*enum.*: npm install tsx/);
  });

  it('scaffolds a project with kubebus init whose own test passes on the test kit', async () => {
    const scaffold = join(project, 'scaffold');
    await cli(['init', scaffold]);
    for (const file of ['package.json', 'operator.ts', 'operator.test.ts', 'Dockerfile'])
      assert.ok(readdirSync(scaffold).includes(file), `kubebus init wrote no ${file}`);
    assert.match(readFileSync(join(scaffold, 'Dockerfile'), 'utf8'), /^USER \d+:\d+$/m);
    const manifest = JSON.parse(readFileSync(join(scaffold, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.match(manifest.dependencies['kubebus'] ?? '', /^\^\d+\.\d+\.\d+$/);
    // kubebus is not published from here: the tarball copied in and installed, as init says
    const packedName = basename(tarball);
    copyFileSync(tarball, join(scaffold, packedName));
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${packedName}`],
      {
        cwd: scaffold,
        timeout: 300_000,
      },
    );
    // the image's build stage, run on the host, installs kubebus from what it copies
    const built = await runBuildStage(scaffold, readFileSync(join(scaffold, 'Dockerfile'), 'utf8'));
    try {
      const installed = JSON.parse(
        readFileSync(join(built, 'node_modules', 'kubebus', 'package.json'), 'utf8'),
      ) as { name: string };
      assert.equal(installed.name, 'kubebus');
      // dev dependencies stay out, those kubebus takes as optional peers too
      for (const dev of ['tsx', '@kubernetes/client-node', 'typescript'])
        assert.ok(!existsSync(join(built, 'node_modules', dev)), `${dev} in the image`);
      // and the image's entrypoint runs the operator from what it holds
      copyFileSync(join(scaffold, 'operator.ts'), join(built, 'operator.ts'));
      const generated = await run(
        process.execPath,
        ['node_modules/kubebus/dist/cli.js', 'generate', 'operator.ts'],
        { cwd: built, timeout: 60_000 },
      );
      assert.match(generated.stdout, /^kind: CustomResourceDefinition$/m);
    } finally {
      rmSync(built, { recursive: true, force: true });
    }
    // its test starts its own apiserver, etcd and nats-server through kubebus/testing
    // (NODE_TEST_CONTEXT would make it report to this runner instead of to its stdout)
    const { NODE_TEST_CONTEXT: _child, ...env } = process.env;
    const tested = await run('npm', ['test'], { cwd: scaffold, env, timeout: 300_000 });
    assert.match(tested.stdout, /(#|ℹ) pass 2\b/);
    assert.match(tested.stdout, /(#|ℹ) fail 0\b/);
  });

  it('runs all roles in one process: converges, refuses a bad spec once, dead-letters what always fails, replays', async () => {
    const allInOne = await operator([], { KUBECONFIG: bed.kubeconfigPath });
    try {
      // converges: owned objects applied, status from the reconcile, Ready from the Deployment
      await createSite('hello', { html: '<h1>hello</h1>', replicas: 2 });
      await waitFor(
        async () => (await ready('hello'))?.reason === 'Replicas',
        'hello to report its replicas',
        60_000,
      );
      const page = await bed
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ namespace: NAMESPACE, name: 'hello' });
      assert.equal(page.data?.['index.html'], '<h1>hello</h1>');
      assert.equal(page.metadata?.ownerReferences?.[0]?.kind, 'StaticSite');
      await podsReady('hello', 2);
      await waitFor(
        async () => (await ready('hello'))?.status === 'True',
        'hello to be Ready once its pods are',
        60_000,
      );
      const hello = await site('hello');
      assert.equal(hello.status?.url, 'http://hello.default.svc');
      assert.equal(hello.status?.observedGeneration, hello.metadata.generation);

      // a spec the zod schema refuses (the CRD cannot): InvalidSpec, one Event, no retries
      await createSite('floating', { html: 'x', image: 'nginx:latest' });
      await waitFor(
        async () => (await ready('floating'))?.reason === 'InvalidSpec',
        'floating to be InvalidSpec',
        60_000,
      );
      assert.match((await ready('floating'))?.message ?? '', /spec\.image: pin a version/);
      const events = async () =>
        (
          await bed
            .kubeConfig()
            .makeApiClient(EventsV1Api)
            .listNamespacedEvent({ namespace: NAMESPACE })
        ).items.filter((e) => e.regarding?.name === 'floating' && e.reason === 'InvalidSpec');
      await waitFor(async () => (await events()).length > 0, 'the InvalidSpec Event');
      // its own status write comes back as a change: reconciled again, but no second Event
      await waitFor(
        async () =>
          (await allInOne.metric('controller_runtime_reconcile_total', {
            controller: 'staticsite',
            result: 'terminal_error',
          })) >= 2,
        'the status write of floating to be seen',
      );
      assert.equal((await events()).length, 1);
      assert.equal(await allInOne.metric('workqueue_retries_total', { name: 'staticsite' }), 0);

      // always failing: an admission policy refuses its ConfigMap → 3 attempts, a dead letter, Degraded
      const admission = bed.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
      await admission.createValidatingAdmissionPolicy({
        body: {
          metadata: { name: 'no-doomed-pages' },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              resourceRules: [
                {
                  apiGroups: [''],
                  apiVersions: ['v1'],
                  operations: ['CREATE', 'UPDATE'],
                  resources: ['configmaps'],
                },
              ],
            },
            validations: [
              { expression: "object.metadata.name != 'doomed'", message: 'no doomed pages' },
            ],
          },
        },
      });
      await admission.createValidatingAdmissionPolicyBinding({
        body: {
          metadata: { name: 'no-doomed-pages' },
          spec: { policyName: 'no-doomed-pages', validationActions: ['Deny'] },
        },
      });
      await waitFor(
        () =>
          bed
            .kubeConfig()
            .makeApiClient(CoreV1Api)
            .createNamespacedConfigMap({
              namespace: NAMESPACE,
              body: { metadata: { name: 'doomed' } },
            })
            .then(
              async () => {
                await bed
                  .kubeConfig()
                  .makeApiClient(CoreV1Api)
                  .deleteNamespacedConfigMap({ namespace: NAMESPACE, name: 'doomed' });
                return false;
              },
              (error: { code?: number }) => error.code === 422,
            ),
        'the admission policy to refuse the doomed page',
      );
      await createSite('doomed', { html: 'never' });
      await waitFor(
        async () =>
          (await site('doomed')).status?.conditions?.some(
            (c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'RetryBudgetSpent',
          ) === true,
        'doomed to be Degraded',
        120_000,
      );
      const { stdout: letters } = await cli(['dlq', 'list']);
      assert.match(letters, /staticsite/);
      assert.match(letters, /doomed/);

      // history: each revision with what each controller did after it, from the bus
      const history = (await cli(['history', 'staticsites.sites.example.com', 'default/hello']))
        .stdout;
      assert.match(history, /^#\d+ \S+ add rv \d+ generation 1 \(watch\)$/m);
      assert.match(history, /^ {4}→ staticsite success in \d+ ms trace [0-9a-f]{32}$/m);
      assert.match(
        history,
        /^ {4}→ staticsite\.status-writer success in \d+ ms, wrote rv \d+ trace [0-9a-f]{32}$/m,
      );
      // each status write sits under the revision its reconcile acted on (same trace),
      // and the revision it produced says who wrote it
      for (const block of history.split(/^(?=#)/m)) {
        for (const [, trace] of block.matchAll(
          /→ staticsite\.status-writer success .* trace ([0-9a-f]{32})$/gm,
        ))
          assert.match(block, new RegExp(`→ staticsite \\w+ .*trace ${trace}$`, 'm'), block);
      }
      assert.match(history, /^ {4}written by staticsite\.status-writer, trace [0-9a-f]{32}$/m);
      const doomed = (await cli(['history', 'staticsites.sites.example.com', 'default/doomed']))
        .stdout;
      assert.match(doomed, /→ staticsite error in \d+ ms: .*no doomed pages/);
      assert.match(doomed, /→ staticsite dead_letter in \d+ ms \(attempt 3\): .*no doomed pages/);
      assert.match(
        doomed,
        /^dead letter #(\d+) .* from staticsite after 3 attempts: .*\(after the fix: kubebus dlq redrive \1\)$/m,
      );

      // status: why an object is (not) Ready, on one screen; kinds and short names resolve
      const broken = (await cli(['status', 'site', 'default/doomed'])).stdout;
      assert.match(broken, /^staticsites\.sites\.example\.com default\/doomed {2}generation 1/m);
      assert.match(broken, /^Degraded +True +RetryBudgetSpent +\S+ +3 attempts failed/m);
      assert.match(
        broken,
        // the dead letter, or, once its Degraded write came back, the parked skip
        /^staticsite +(dead_letter +\d+ms +3 +\S+ +[0-9a-f]{32} +.*no doomed pages|skipped +\d+ms +1 +\S+ +[0-9a-f]{32} +parked after a dead letter)/m,
      );
      assert.match(
        broken,
        /^ {2}#(\d+) \S+ from staticsite after 3 attempts: apiserver answered 422.*\(after the fix: kubebus dlq redrive \1\)$/m,
      );
      const fine = (await cli(['status', 'StaticSite', 'default/hello'])).stdout;
      assert.match(fine, /^Ready +True +Replicas +\S+ +2\/2 ready$/m);
      assert.match(fine, /^staticsite +success +/m);
      assert.match(fine, /^DEAD LETTERS: none$/m);
      // where its work goes: a partition per controller, held by a running replica, nothing waiting
      assert.match(fine, /^staticsite +\d+ +(?!\(nobody)\S+ +none$/m);
      assert.match(fine, /^staticsite status-writer +\d+ +(?!\(nobody)\S+ +none$/m);
      const missing = await cli(['status', 'site', 'default/nope']).then(
        () => undefined,
        (error: { code?: number; stdout?: string }) => error,
      );
      assert.equal(missing?.code, 1);
      assert.match(missing?.stdout ?? '', /not found/);
      // with a kubeconfig given, its Events are not missing for want of one
      assert.doesNotMatch(missing?.stdout ?? '', /set KUBECONFIG/);

      // replay: the recorded revisions of hello, re-run as a dry run, agree with what was recorded
      const replayed = await cli(['replay', 'operator.ts', 'default/hello']);
      const revisions = replayed.stdout
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('#'));
      assert.ok(revisions.length >= 3, replayed.stdout);
      assert.match(revisions.at(-1) ?? '', /status same as recorded/);
      // the writes each revision would make, against what was there then: at the first
      // revision the ConfigMap did not exist yet; at the last one it is in place
      const blocks = replayed.stdout.split(/^(?=#)/m);
      assert.match(
        blocks[0] ?? '',
        /^ {4}write PATCH \/api\/v1\/namespaces\/default\/configmaps\/hello: would create it$/m,
      );
      assert.match(
        blocks.at(-1) ?? '',
        /^ {4}write PATCH \/api\/v1\/namespaces\/default\/configmaps\/hello: no change$/m,
      );
      const second = /^#(\d+)/.exec(revisions[1] ?? '')?.[1];
      const ranged = await cli(['replay', 'operator.ts', 'default/hello', '--from', second ?? '']);
      assert.equal(
        ranged.stdout.split('\n').filter((line) => line.startsWith('#')).length,
        revisions.length - 1,
      );

      // a changed reconciler, checked against recorded history: replay exits 1 where it diverges
      const changed = readFileSync(join(project, 'operator.ts'), 'utf8').replace(
        '.svc`',
        '.svc.cluster.local`',
      );
      writeFileSync(join(project, 'operator-changed.ts'), changed);
      const diverged = await cli(['replay', 'operator-changed.ts', 'default/hello']).then(
        () => undefined,
        (error: { code?: number; stdout?: string }) => error,
      );
      assert.equal(diverged?.code, 1, 'replay of a changed reconciler exited 0');
      assert.match(diverged?.stdout ?? '', /status differs from recorded/);
      assert.match(
        diverged?.stdout ?? '',
        /status\.url: .*hello\.default\.svc.*hello\.default\.svc\.cluster\.local/,
      );

      // a reconciler that now fails where the recorded one came to a status: exit 1 too
      const regressed = readFileSync(join(project, 'operator.ts'), 'utf8').replace(
        'async reconcile(site, ctx) {',
        "async reconcile(site, ctx) {\n    if (site.metadata.name !== '') throw new Error('a regression');",
      );
      writeFileSync(join(project, 'operator-broken.ts'), regressed);
      const failing = await cli(['replay', 'operator-broken.ts', 'default/hello']).then(
        () => undefined,
        (error: { code?: number; stdout?: string }) => error,
      );
      assert.equal(failing?.code, 1, 'replay of a failing reconciler exited 0');
      assert.match(
        failing?.stdout ?? '',
        /no status computed \(a regression\); its recorded reconcile came to a status: failed/,
      );
    } finally {
      await allInOne.stop();
    }
  });

  it('runs one role per process, each with only its generated RBAC', async () => {
    const account = (role: string) =>
      bed.serviceAccountKubeconfig('kubebus', `kubebus-staticsite-${role}`);
    const roles = await Promise.all(
      ['watcher', 'reconciler', 'status-writer'].map(async (role) =>
        operator(['--role', role], {
          KUBECONFIG: await account(role),
          KUBEBUS_REPLICA_ID: `${role}-1`,
        }),
      ),
    );
    try {
      await createSite('split', { html: '<p>split</p>' });
      await waitFor(
        async () => (await ready('split'))?.reason === 'Replicas',
        'split to report its replicas',
        60_000,
      );
      await podsReady('split', 1);
      await waitFor(
        async () => (await ready('split'))?.status === 'True',
        'split to be Ready once its pods are',
        60_000,
      );
      // and no more than that: what each role never does is refused
      const can = (role: string, verb: string, resource: string, group = '', sub = '') =>
        allowed(
          bed,
          { namespace: 'kubebus', name: `kubebus-staticsite-${role}` },
          { namespace: NAMESPACE, verb, group, resource, subresource: sub },
        );
      assert.equal(await can('reconciler', 'patch', 'configmaps'), true);
      // it deletes what it owns (ctx.delete, pruning), nothing else
      assert.equal(await can('reconciler', 'delete', 'configmaps'), true);
      assert.equal(await can('reconciler', 'delete', 'secrets'), false);
      assert.equal(await can('reconciler', 'delete', 'staticsites', 'sites.example.com'), false);
      assert.equal(await can('reconciler', 'get', 'secrets'), false);
      assert.equal(
        await can('reconciler', 'patch', 'staticsites', 'sites.example.com', 'status'),
        false,
      );
      assert.equal(await can('watcher', 'watch', 'deployments', 'apps'), true);
      assert.equal(await can('watcher', 'create', 'deployments', 'apps'), false);
      assert.equal(await can('watcher', 'list', 'secrets'), false);
      assert.equal(
        await can('status-writer', 'patch', 'staticsites', 'sites.example.com', 'status'),
        true,
      );
      assert.equal(await can('status-writer', 'patch', 'staticsites', 'sites.example.com'), false);
      assert.equal(await can('status-writer', 'patch', 'deployments', 'apps'), false);
    } finally {
      await Promise.all(roles.map((role) => role.stop()));
    }
  });

  it('generates namespaced RBAC for an operator that watches some namespaces only', async () => {
    await cli([
      'generate',
      'operator.ts',
      '--out',
      'generated-namespaced',
      '--namespace',
      'kubebus-ns',
      '--watch-namespaces',
      'shop',
    ]);
    const rbac = readFileSync(
      join(project, 'generated-namespaced', 'kustomize', 'rbac.yaml'),
      'utf8',
    );
    // nothing cluster-wide but what authenticating metrics scrapes needs
    // (TokenReviews and SubjectAccessReviews are cluster-scoped)
    const clusterWide = parseAllDocuments(rbac)
      .map((document) => document.toJSON() as { kind: string; metadata: { name: string } })
      .filter((object) => object.kind.startsWith('Cluster'))
      .map((object) => object.metadata.name);
    for (const name of clusterWide)
      assert.match(name, /^kubebus-staticsite-metrics-(auth|reader)$/);
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['kubebus-ns', 'shop'])
      await core.createNamespace({ body: { metadata: { name } } });
    await applyFile(bed, join(project, 'generated-namespaced', 'kustomize', 'rbac.yaml'));
    const can = (namespace: string) =>
      allowed(
        bed,
        { namespace: 'kubebus-ns', name: 'kubebus-staticsite-watcher' },
        { namespace, verb: 'list', group: 'sites.example.com', resource: 'staticsites' },
      );
    assert.equal(await can('shop'), true);
    assert.equal(await can('default'), false);
  });

  it('refuses to start a process whose partition count disagrees with the deployed one', async () => {
    // the same operator, edited to split its work differently while a reconciler runs with 4
    const running = await operator(['--role', 'reconciler'], { KUBEBUS_REPLICA_ID: 'with-4' });
    const edited = readFileSync(join(project, 'operator.ts'), 'utf8').replace(
      "name: 'staticsite',",
      "name: 'staticsite',\n  partitions: 8,",
    );
    assert.notEqual(edited, readFileSync(join(project, 'operator.ts'), 'utf8'));
    writeFileSync(join(project, 'operator-8.ts'), edited);
    const refused = await cli(['run', 'operator-8.ts', '--role', 'reconciler'], {
      KUBEBUS_HEALTH_PORT: '0',
      KUBEBUS_REPLICA_ID: 'with-8',
    })
      .then(
        () => undefined,
        (error: { code?: number; stderr?: string }) => error,
      )
      .finally(() => running.stop());
    assert.ok(refused, 'a reconciler with another partition count started');
    assert.equal(refused.code, 2);
    const lines = (refused.stderr ?? '').trim().split('\n');
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(
      lines[0] ?? '',
      /staticsite\.work is split into 4 partitions .* says 8, and \d+ of its processes are alive \(.*work with-4/,
    );
  });
});
