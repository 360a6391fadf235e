import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROLES } from '../host/role-configs.js';
import { NATS_CONFIG_RELOADER_IMAGE, NATS_PID_FILE } from './nats-config-reloader.js';
import { natsObjectsOf } from './nats-statefulset.js';
import { mountedTlsFiles } from './nats-tls-config.js';
import { plainSettings } from './settings.js';
import { site } from './test-operators.js';

interface Container {
  name: string;
  image: string;
  args: string[];
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  shareProcessNamespace?: boolean;
  containers: Container[];
  volumes: { name: string; emptyDir?: unknown }[];
}

const settings = plainSettings({
  namespace: 'ops',
  image: 'example/site:1',
  module: 'dist/site.js',
  watchNamespaces: [],
});
const statefulSet = natsObjectsOf(site, ROLES, settings).find(
  (o) => (o as { kind: string }).kind === 'StatefulSet',
) as { spec: { template: { spec: PodSpec } } };
const pod = statefulSet.spec.template.spec;
const byName = (name: string) => pod.containers.find((c) => c.name === name);
/** the value after each occurrence of a flag */
const valuesOf = (args: string[], flag: string) =>
  args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));

describe('the NATS config reloader', () => {
  it('runs beside nats-server, which keeps the first place the overlays patch', () => {
    assert.equal(pod.containers[0]?.name, 'nats');
    assert.equal(byName('reloader')?.image, NATS_CONFIG_RELOADER_IMAGE);
    assert.match(NATS_CONFIG_RELOADER_IMAGE, /^natsio\/nats-server-config-reloader:/);
    assert.equal(pod.shareProcessNamespace, true);
  });

  it('signals the pid nats-server writes, on a volume both mount', () => {
    const nats = byName('nats');
    const reloader = byName('reloader');
    assert.ok(nats && reloader);
    assert.deepEqual(valuesOf(nats.args, '--pid'), [NATS_PID_FILE]);
    assert.deepEqual(valuesOf(reloader.args, '-pid'), [NATS_PID_FILE]);
    const pidDir = NATS_PID_FILE.replace(/\/[^/]+$/, '');
    for (const container of [nats, reloader])
      assert.ok(
        container.volumeMounts.some((m) => m.name === 'pid' && m.mountPath === pidDir),
        container.name,
      );
    assert.ok(pod.volumes.some((v) => v.name === 'pid' && v.emptyDir !== undefined));
  });

  it('watches the configuration and every TLS file nats-server reads', () => {
    const nats = byName('nats');
    const reloader = byName('reloader');
    assert.ok(nats && reloader);
    const watched = valuesOf(reloader.args, '-config');
    const natsConfig = valuesOf(nats.args, '-c')[0];
    assert.ok(natsConfig !== undefined && watched.includes(natsConfig), natsConfig);
    for (const file of [mountedTlsFiles.cert, mountedTlsFiles.key, mountedTlsFiles.ca])
      assert.ok(watched.includes(file), file);
    // each watched file is where the reloader mounts it, as in the NATS container
    for (const file of watched) {
      const mount = reloader.volumeMounts.find((m) => file?.startsWith(`${m.mountPath}/`));
      assert.ok(mount, file);
      assert.ok(
        nats.volumeMounts.some((m) => m.name === mount.name && m.mountPath === mount.mountPath),
        file,
      );
    }
  });
});
