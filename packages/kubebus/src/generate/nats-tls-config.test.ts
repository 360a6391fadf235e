import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { natsCertificatesOf } from './nats-certificates.js';
import { natsServerConfigOf } from './nats-server.js';
import { natsObjectsOf } from './nats-statefulset.js';
import {
  ROUTES_VARIABLE,
  ROUTE_PASSWORD_VARIABLE,
  SINGLE_SERVER_CLUSTER,
  routesValue,
  statefulSetCluster,
} from './nats-tls-config.js';
import { plainSettings } from './settings.js';
import { plain, site } from './test-operators.js';

const repo = (path: string) => new URL(`../../../../${path}`, import.meta.url);
const settings = plainSettings({
  namespace: 'ops',
  image: 'i:1',
  module: 'm.js',
  watchNamespaces: [],
});

/** Every value given to a `password` key of a nats-server configuration. */
const passwords = (conf: string) =>
  [...conf.matchAll(/\bpass(?:word)?\s*[:=]\s*("[^"]*"|\S+)/g)].map((m) => m[1] ?? '');
/** An environment reference, or a bcrypt hash: nothing readable. */
const notPlaintext = (value: string) => /^\$[A-Z_]+$/.test(value) || /^"?\$2[aby]\$/.test(value);

describe('the shipped nats-server configuration', () => {
  it('holds no plaintext password: users, routes, in the generator and in deploy/', () => {
    const confs = [
      natsServerConfigOf(site, ROLES),
      natsServerConfigOf(plain, ROLES),
      statefulSetCluster(),
      readFileSync(repo('deploy/kubernetes/base/nats/nats-server.conf'), 'utf8'),
      readFileSync(repo('deploy/kubernetes/overlays/ha/cluster.conf'), 'utf8'),
      readFileSync(repo('deploy/nats/nats-server.conf'), 'utf8'),
    ];
    for (const conf of confs) {
      const found = passwords(conf);
      assert.ok(found.length > 0, 'a configuration with users has passwords');
      for (const value of found) assert.ok(notPlaintext(value), `plaintext password ${value}`);
    }
    assert.ok(passwords(statefulSetCluster()).includes(`$${ROUTE_PASSWORD_VARIABLE}`));
    assert.match(statefulSetCluster(), new RegExp(`routes: \\$${ROUTES_VARIABLE}\\n`));
  });

  it('requires TLS of clients and keeps monitoring on loopback', () => {
    const conf = natsServerConfigOf(site, ROLES);
    assert.match(conf, /^http: 127\.0\.0\.1:8222$/m);
    assert.doesNotMatch(conf, /^http: 0\.0\.0\.0/m);
    assert.match(conf, /^tls \{\n {2}cert_file: "\/etc\/nats-tls\/tls\.crt"/m);
    assert.match(conf, /^include \.\/cluster\.conf$/m);
    assert.doesNotMatch(SINGLE_SERVER_CLUSTER, /^\s*[a-z]/m, 'one server has no cluster');
  });

  it('verifies routes both ways, with route authorization', () => {
    const cluster = statefulSetCluster();
    assert.match(
      cluster,
      /authorization \{\n {4}user: route\n {4}password: \$KUBEBUS_ROUTE_PASSWORD/,
    );
    assert.match(cluster, /tls \{[^}]*verify: true/);
  });

  it('is what the ha overlay ships', () => {
    assert.equal(
      readFileSync(repo('deploy/kubernetes/overlays/ha/cluster.conf'), 'utf8'),
      statefulSetCluster(),
    );
  });

  it('carries the route credentials in the route URLs of KUBEBUS_NATS_ROUTES', () => {
    assert.equal(
      routesValue(['a:6222', 'b:6222'], '$(P)'),
      '["nats-route://route:$(P)@a:6222", "nats-route://route:$(P)@b:6222"]',
    );
  });
});

describe('the NATS pods', () => {
  const objects = natsObjectsOf(site, ROLES, settings) as {
    kind: string;
    spec: Record<string, unknown>;
  }[];
  const statefulSet = JSON.stringify(objects.find((o) => o.kind === 'StatefulSet'));

  it('mount the TLS Secret and probe monitoring from inside the pod', () => {
    assert.match(statefulSet, /"secretName":"nats-tls"/);
    assert.match(statefulSet, /"mountPath":"\/etc\/nats-tls","readOnly":true/);
    assert.match(statefulSet, /http:\/\/127\.0\.0\.1:8222\/healthz/);
    assert.doesNotMatch(statefulSet, /"containerPort":8222/);
  });

  it('admit clients on 4222 and other servers on 6222 only, and dial only routes and DNS', () => {
    const policy = objects.find((o) => o.kind === 'NetworkPolicy');
    const ports = JSON.stringify(policy?.spec['ingress']);
    assert.doesNotMatch(ports, /8222/);
    assert.deepEqual(policy?.spec['policyTypes'], ['Ingress', 'Egress']);
  });

  it('get a certificate for every name they are reached by, usable both ways on routes', () => {
    const certificate = natsCertificatesOf(settings, 'nats-tls').find((o) =>
      JSON.stringify(o).includes('"secretName":"nats-tls"'),
    ) as { spec: { dnsNames: string[]; usages: string[] } };
    assert.ok(certificate.spec.dnsNames.includes('nats.ops.svc'));
    assert.ok(certificate.spec.dnsNames.includes('*.nats-headless'));
    assert.ok(certificate.spec.usages.includes('client auth'));
  });
});
