// docker-compose.yml, checked without a Docker engine: loaded by the Compose
// specification's own loader (compose-go, what `docker compose` runs), then
// every reference it makes is checked against the repository: build contexts,
// bind mounts, the variables .env.example must define, the NATS users and
// their passwords, the files the init step applies, healthchecks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { toolBinary } from '../bed/tools.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const composeFile = join(root, 'docker-compose.yml');
const example = readFileSync(join(root, '.env.example'), 'utf8');
const variablesOfExample = [...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1] as string);

interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string | null>;
  volumes?: { type: string; source?: string; target: string }[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[] };
  restart?: string;
}
interface Project {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

function load(envFile: string) {
  return spawnSync(toolBinary('composecheck'), [composeFile, envFile], {
    encoding: 'utf8',
    cwd: root,
    // only the env file speaks: nothing of the test's own environment leaks in
    env: { PATH: process.env['PATH'] ?? '' },
  });
}

describe('docker-compose.yml', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubebus-compose-'));
  const filled = join(dir, '.env');
  // .env.example with a value for every variable, as a user fills it in
  writeFileSync(filled, example.replace(/^([A-Z0-9_]+)=$/gm, '$1=value-of-$1'));

  it('is refused with a message naming .env while .env.example is not filled in', () => {
    const result = load(join(root, '.env.example'));
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /required variable \w+ is missing a value: set it in \.env/);
  });

  it('loads with the Compose specification loader, and every reference resolves', () => {
    const result = load(filled);
    assert.equal(result.status, 0, result.stderr);
    const project = JSON.parse(result.stdout) as Project;
    const services = project.services;
    for (const name of [
      'k3s',
      'kubeconfig',
      'init',
      'nats',
      'topology',
      'watcher',
      'reconciler',
      'status-writer',
    ])
      assert.ok(services[name], `no service ${name}`);

    const conf = readFileSync(join(root, 'deploy/nats/nats-server.conf'), 'utf8');
    const compose = readFileSync(composeFile, 'utf8');
    // every variable the file uses is one .env.example defines
    for (const [, variable] of compose.matchAll(/\$\{([A-Z0-9_]+)/g))
      assert.ok(
        variablesOfExample.includes(variable as string),
        `${variable} is not in .env.example`,
      );

    for (const [name, service] of Object.entries(services)) {
      assert.ok(service.image ?? service.build, `${name} has neither image nor build`);
      if (service.image !== undefined && service.build === undefined)
        assert.match(service.image, /:[\w.-]+$/, `${name}: pin the image's tag`);
      assert.doesNotMatch(service.image ?? '', /:latest$/, name);
      if (service.build !== undefined)
        assert.ok(
          existsSync(join(service.build.context, service.build.dockerfile ?? 'Dockerfile')),
          `${name}: no Dockerfile in ${service.build.context}`,
        );
      for (const volume of service.volumes ?? []) {
        if (volume.type === 'bind')
          assert.ok(
            existsSync(volume.source ?? ''),
            `${name}: bind source ${volume.source} is missing`,
          );
        else
          assert.ok(
            volume.source && project.volumes?.[volume.source] !== undefined,
            `${name}: volume ${volume.source} undeclared`,
          );
      }
      for (const dependency of Object.keys(service.depends_on ?? {}))
        assert.ok(services[dependency], `${name} depends on unknown ${dependency}`);
      // what keeps running says when it is healthy; one-shot steps finish instead
      if (service.restart !== undefined && service.restart !== 'no')
        assert.ok(service.healthcheck?.test, `${name} runs on but has no healthcheck`);
      // each kubebus process connects as a NATS user the configuration defines, with its password
      const user = service.environment?.['KUBEBUS_NATS_USER'];
      if (typeof user === 'string') {
        assert.match(
          conf,
          new RegExp(
            `user: "${user}", password: \\$KUBEBUS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`,
          ),
        );
        assert.equal(
          service.environment?.['KUBEBUS_NATS_PASSWORD'],
          `value-of-KUBEBUS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`,
          `${name} uses another user's password`,
        );
      }
      // the reconciler's second user, in the operator's state account (ADR 0015)
      const stateUser = service.environment?.['KUBEBUS_STATE_NATS_USER'];
      if (typeof stateUser === 'string') {
        const variable = `KUBEBUS_${stateUser.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
        assert.match(conf, new RegExp(`user: "${stateUser}", password: \\$${variable}`));
        assert.equal(service.environment?.['KUBEBUS_STATE_NATS_PASSWORD'], `value-of-${variable}`);
      }
    }
    // the services wait for the CRD and the topology; the topology runs as admin
    for (const name of ['watcher', 'reconciler', 'status-writer']) {
      const service = services[name] as Service;
      assert.equal(service.depends_on?.['init']?.condition, 'service_completed_successfully');
      assert.equal(service.depends_on?.['topology']?.condition, 'service_completed_successfully');
      assert.equal(service.environment?.['KUBECONFIG'], '/kube/config');
      // every role is `kubebus run` (the image's entrypoint) of the operator the build bundles
      assert.deepEqual(service.command, [
        'run',
        'dist/operators/databasecluster.js',
        '--role',
        name,
      ]);
    }
    assert.match(
      readFileSync(join(root, 'deploy', 'scripts', 'build.ts'), 'utf8'),
      /'operators\/databasecluster': 'examples\/databasecluster\/operator\.ts'/,
    );
    assert.match(
      readFileSync(join(root, 'Dockerfile'), 'utf8'),
      /^ENTRYPOINT \["node", "--enable-source-maps", "dist\/kubebus\.js"\]$/m,
    );
    assert.equal(services['topology']?.environment?.['KUBEBUS_NATS_USER'], 'admin');
    assert.deepEqual(services['topology']?.command, [
      'topology',
      'apply',
      'dist/operators/databasecluster.js',
    ]);
    // the passwords nats-server needs all reach it
    for (const [, variable] of conf.matchAll(/\$(KUBEBUS_[A-Z_]+_PASSWORD)/g))
      assert.equal(services['nats']?.environment?.[variable as string], `value-of-${variable}`);
    // the files the init step applies exist where its mount puts them
    const init = (services['init']?.command ?? []).join(' ');
    for (const [, path] of init.matchAll(/-f \/deploy\/(\S+)/g))
      assert.ok(existsSync(join(root, 'deploy', path as string)), `init applies missing ${path}`);
  });
});
