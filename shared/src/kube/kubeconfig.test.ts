import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kubeconfigFiles, loadKubeConfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubebus-kubeconfig-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(cluster: object, user: object): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    path,
    JSON.stringify({
      'current-context': 'ctx',
      contexts: [
        { name: 'other', context: { cluster: 'x', user: 'x' } },
        { name: 'ctx', context: { cluster: 'c', user: 'u' } },
      ],
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user }],
    }),
  );
  return path;
}

async function optionsOf(path: string): Promise<RequestOptions> {
  const options: RequestOptions = {};
  await (await loadKubeConfig(path)).applyToHTTPSOptions(options);
  return options;
}

describe('kubeconfig', () => {
  it('reads the current context: server, CA and client certificate, inline or from files beside it', async () => {
    writeFileSync(join(dir, 'ca.crt'), 'CA');
    const path = kubeconfig(
      {
        server: 'https://127.0.0.1:6443',
        'certificate-authority': 'ca.crt',
        'tls-server-name': 'kubernetes',
      },
      {
        'client-certificate-data': Buffer.from('CERT').toString('base64'),
        'client-key-data': Buffer.from('KEY').toString('base64'),
      },
    );
    assert.equal(
      (await loadKubeConfig(path)).getCurrentCluster()?.server,
      'https://127.0.0.1:6443',
    );
    const options = await optionsOf(path);
    assert.deepEqual(options.ca, Buffer.from('CA'));
    assert.deepEqual(options.cert, Buffer.from('CERT'));
    assert.deepEqual(options.key, Buffer.from('KEY'));
    assert.equal(options.servername, 'kubernetes');
  });

  it('reads a token file again each time (rotated service-account tokens)', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'one\n');
    const credentials = await loadKubeConfig(kubeconfig({ server: 'https://h' }, { tokenFile }));
    const first: RequestOptions = {};
    await credentials.applyToHTTPSOptions(first);
    writeFileSync(tokenFile, 'two\n');
    const second: RequestOptions = {};
    await credentials.applyToHTTPSOptions(second);
    assert.equal((first.headers as Record<string, string>)['Authorization'], 'Bearer one');
    assert.equal((second.headers as Record<string, string>)['Authorization'], 'Bearer two');
  });

  it('hands exec plugins to client-node', async () => {
    const path = kubeconfig(
      { server: 'https://h' },
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true' } },
    );
    const credentials = await loadKubeConfig(path);
    assert.equal(credentials.constructor.name, 'KubeConfig');
  });

  it('says what is missing', async () => {
    const path = join(dir, 'empty');
    writeFileSync(path, 'apiVersion: v1\n');
    await assert.rejects(loadKubeConfig(path), /no current context/);
  });
});

describe('kubeconfig loading rules (client-go)', () => {
  const write = (name: string, content: object) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  it('reads the KUBECONFIG list (missing files skipped), else ~/.kube/config, else none', () => {
    const a = write('list-a', {});
    const b = write('list-b', {});
    const missing = join(dir, 'missing');
    assert.deepEqual(kubeconfigFiles({ KUBECONFIG: `${a}:${missing}:${b}` }), [a, b]);
    const home = mkdtempSync(join(dir, 'home-'));
    assert.deepEqual(kubeconfigFiles({ HOME: home }), []);
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), '{}');
    assert.deepEqual(kubeconfigFiles({ HOME: home }), [join(home, '.kube', 'config')]);
    // KUBECONFIG, when set, is the whole answer
    assert.deepEqual(kubeconfigFiles({ HOME: home, KUBECONFIG: missing }), []);
  });

  it('merges a list as client-go does: the first current-context and the first entry of each name win', async () => {
    const first = write('merge-first', {
      'current-context': 'dev',
      contexts: [{ name: 'dev', context: { cluster: 'dev', user: 'me' } }],
      clusters: [{ name: 'dev', cluster: { server: 'https://dev' } }],
    });
    const second = write('merge-second', {
      'current-context': 'prod',
      contexts: [
        { name: 'prod', context: { cluster: 'prod', user: 'me' } },
        { name: 'dev', context: { cluster: 'prod', user: 'me' } },
      ],
      clusters: [
        { name: 'prod', cluster: { server: 'https://prod' } },
        { name: 'dev', cluster: { server: 'https://shadowed' } },
      ],
      users: [{ name: 'me', user: { token: 'from-second' } }],
    });
    const merged = await loadKubeConfig([first, second]);
    assert.equal(merged.getCurrentCluster()?.server, 'https://dev');
    const options: RequestOptions = {};
    await merged.applyToHTTPSOptions(options);
    assert.equal(
      (options.headers as Record<string, string>)['Authorization'],
      'Bearer from-second',
    );
    // --context picks another one
    const prod = await loadKubeConfig([first, second], {}, { context: 'prod' });
    assert.equal(prod.getCurrentCluster()?.server, 'https://prod');
    await assert.rejects(loadKubeConfig([first], {}, { context: 'nope' }), /no context named nope/);
  });
});
