// /metrics attacked as a pod in the cluster would (docs/security.md): a role
// run as users run it (`kubebus run`, its own ServiceAccount's token, the RBAC
// `kubebus generate` writes) on a test bed with RBAC on. Before, /metrics was
// plain HTTP on the health port and answered anyone. Now it is HTTPS on its
// own port: no token or a bad one → 401, a valid token whose user RBAC does
// not allow `get /metrics` → 403, the scraper account bound to the generated
// metrics-reader role → the metrics; the probes stay open for the kubelet.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { KubeClient, loadKubeConfig } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { monitoringOf } from '../../packages/kubebus/src/generate/monitoring.js';
import { plainSettings } from '../../packages/kubebus/src/generate/settings.js';
import { ROLES } from '../../packages/kubebus/src/host/role-configs.js';
import widgets from '../support/operators/widgets.js';
import { httpCall } from '../bed/http.js';
import { freePort } from '../bed/ports.js';
import { TestBed } from '../bed/testbed.js';
import { ServiceProcess, WIDGETS_OPERATOR, kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'kubebus-metrics';
const WATCHER = `kubebus-${widgets.name}-watcher`;
const SCRAPER = `kubebus-${widgets.name}-metrics-scraper`;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly issuer: string;
}

/** GET over HTTPS as Prometheus with `insecureSkipVerify` does it. */
function scrape(port: number, path: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        timeout: 10_000,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        const cn = (res.socket as TLSSocket).getPeerCertificate().issuer?.CN;
        const issuer = (Array.isArray(cn) ? cn[0] : cn) ?? '';
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body, issuer });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics behind TokenReview and SubjectAccessReview', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let admin: KubeClient;
  let watcher: ServiceProcess;
  let metricsPort: number;

  const tokenOf = async (account: string): Promise<string> => {
    const answer = await admin.request<{ status: { token: string } }>(
      `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${account}/token`,
      {
        method: 'POST',
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      },
    );
    return answer.status.token;
  };

  const create = async (object: Record<string, unknown>) => {
    const kind = String(object['kind']);
    const meta = object['metadata'] as { namespace?: string };
    const path: Record<string, string> = {
      CustomResourceDefinition: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      ServiceAccount: `/api/v1/namespaces/${meta.namespace ?? ''}/serviceaccounts`,
      Secret: `/api/v1/namespaces/${meta.namespace ?? ''}/secrets`,
      ClusterRole: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      ClusterRoleBinding: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    };
    const collection = path[kind];
    if (collection === undefined) return; // PodMonitor, PrometheusRule: no CRDs here
    await admin.request(collection, { method: 'POST', body: object });
  };

  before(async () => {
    const [{ stdout }, started] = await Promise.all([
      promisify(execFile)(
        process.execPath,
        kubebusArgs('generate', WIDGETS_OPERATOR, '--only', 'crd,rbac', '--namespace', NAMESPACE),
        { maxBuffer: 8 << 20 },
      ),
      TestBed.start(),
    ]);
    bed = started;
    admin = new KubeClient(
      await loadKubeConfig(bed.kubeconfigPath, {}),
      restClientMetrics(new Registry()),
    );
    await admin.request('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    });
    const generated = parseAllDocuments(stdout).map((d) => d.toJSON() as Record<string, unknown>);
    const monitoring = monitoringOf(
      widgets,
      ROLES,
      plainSettings({ namespace: NAMESPACE, image: 'i', module: 'm', watchNamespaces: [] }),
    ) as Record<string, unknown>[];
    for (const object of [...generated, ...monitoring]) await create(object);
    await admin.request(`/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'intruder' } },
    });
    metricsPort = await freePort();
    // as the generated Deployment runs it: all interfaces, its own account, nothing set for /metrics
    watcher = await ServiceProcess.start(
      bed,
      'watcher',
      {
        KUBECONFIG: await bed.serviceAccountKubeconfig(NAMESPACE, WATCHER),
        KUBEBUS_HEALTH_HOST: '0.0.0.0',
        KUBEBUS_METRICS_PORT: String(metricsPort),
      },
      { operator: WIDGETS_OPERATOR, waitReady: false },
    );
    await waitFor(
      async () => (await scrape(metricsPort, '/metrics')).status > 0,
      'the metrics port to answer',
      60_000,
    );
  });

  after(async () => {
    await watcher?.stop();
    await bed?.stop();
  });

  it('answers 401 to a request without a token, or with one the apiserver does not know', async () => {
    const anonymous = await scrape(metricsPort, '/metrics');
    assert.equal(anonymous.status, 401, anonymous.body);
    assert.doesNotMatch(anonymous.body, /process_cpu|kubebus_/);
    // served with the certificate made at start: nothing mounted
    assert.equal(anonymous.issuer, 'kubebus-metrics');
    const forged = await scrape(metricsPort, '/metrics', 'eyJhbGciOi.forged.token');
    assert.equal(forged.status, 401, forged.body);
  });

  it('answers 403 to a valid token whose user RBAC does not let get /metrics', async () => {
    const denied = await scrape(metricsPort, '/metrics', await tokenOf('intruder'));
    assert.equal(denied.status, 403, denied.body);
    assert.match(
      denied.body,
      /system:serviceaccount:kubebus-metrics:intruder may not get \/metrics/,
    );
    assert.doesNotMatch(denied.body, /process_cpu|kubebus_/);
    // the role's own account reads nothing either: it may review, not read
    const self = await scrape(metricsPort, '/metrics', await tokenOf(WATCHER));
    assert.equal(self.status, 403, self.body);
  });

  it('serves the metrics to the scraper account bound to the generated metrics-reader role', async () => {
    const token = await tokenOf(SCRAPER);
    const served = await scrape(metricsPort, '/metrics', token);
    assert.equal(served.status, 200, served.body);
    assert.match(served.body, /^process_cpu_user_seconds_total /m);
    assert.match(served.body, /^# HELP rest_client_requests_total /m);
    // only /metrics, only GET
    assert.equal((await scrape(metricsPort, '/debug/pprof', token)).status, 404);
  });

  it('keeps the probes open on the health port and no longer serves /metrics there', async () => {
    const base = `http://127.0.0.1:${watcher.healthPort}`;
    assert.equal((await httpCall(`${base}/healthz`)).status, 200);
    const ready = await httpCall(`${base}/readyz`);
    assert.ok([200, 503].includes(ready.status), `readyz: ${ready.status}`);
    // a failing check names itself, never its reason, off loopback
    assert.doesNotMatch(ready.body, /failed: (?!reason withheld)/);
    const plain = await httpCall(`${base}/metrics`);
    assert.equal(plain.status, 404, 'plain /metrics on the health port');
  });

  it('refuses to start with unauthenticated /metrics on a non-loopback address', async () => {
    const result = await promisify(execFile)(
      process.execPath,
      kubebusArgs('run', WIDGETS_OPERATOR, '--role', 'watcher'),
      {
        env: {
          ...process.env,
          KUBECONFIG: bed.kubeconfigPath,
          KUBEBUS_NATS_URL: bed.natsUrl,
          KUBEBUS_HEALTH_HOST: '0.0.0.0',
          KUBEBUS_HEALTH_PORT: String(await freePort()),
          KUBEBUS_METRICS_AUTH: 'none',
        },
        timeout: 60_000,
      },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({
        code: error.code ?? -1,
        stderr: error.stderr ?? '',
      }),
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /KUBEBUS_METRICS_AUTH=kubernetes/);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  });
});
