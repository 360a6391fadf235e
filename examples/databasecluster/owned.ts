// The objects a DatabaseCluster owns, as pure functions of the cluster: a
// headless Service, a ConfigMap, a StatefulSet, and (created once) a Secret.
// ctx.apply adds the controller owner reference. Each body is checked against
// its kind's type (a misspelt field does not compile) and returned whole, with
// apiVersion and kind, as the benchmarks send it too.
import {
  kinds,
  type BodyOf,
  type DesiredObject,
  type Resource,
  type ResourceObject,
} from 'kubebus';
import { randomBytes } from 'node:crypto';
import type { DatabaseClusterSpec } from './spec.js';

type KubeObject = Pick<ResourceObject, 'metadata'>;
type Annotations = Readonly<Record<string, string>>;
type ApplyBody = DesiredObject;

function objectOf<R extends Resource>(kind: R, body: BodyOf<R>): ApplyBody {
  const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
  return { ...body, apiVersion, kind: kind.kind };
}

const ENGINES = {
  postgres: {
    image: 'postgres',
    port: 5432,
    dataDir: '/var/lib/postgresql/data',
    passwordEnv: 'POSTGRES_PASSWORD',
  },
  mysql: {
    image: 'mysql',
    port: 3306,
    dataDir: '/var/lib/mysql',
    passwordEnv: 'MYSQL_ROOT_PASSWORD',
  },
} as const;

export function names(cluster: KubeObject) {
  const name = cluster.metadata.name;
  return {
    service: name,
    statefulSet: name,
    configMap: `${name}-config`,
    secret: `${name}-credentials`,
  };
}

function meta(cluster: KubeObject, name: string) {
  return {
    name,
    namespace: cluster.metadata.namespace ?? 'default',
    labels: labels(cluster),
  };
}

function labels(cluster: KubeObject): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'databasecluster',
    'app.kubernetes.io/instance': cluster.metadata.name,
    'app.kubernetes.io/managed-by': 'kubebus',
  };
}

export function endpoint(cluster: KubeObject, spec: DatabaseClusterSpec): string {
  const namespace = cluster.metadata.namespace ?? 'default';
  return `${names(cluster).service}.${namespace}.svc:${ENGINES[spec.engine].port}`;
}

export function desiredService(cluster: KubeObject, spec: DatabaseClusterSpec): ApplyBody {
  return objectOf(kinds.Service, {
    metadata: meta(cluster, names(cluster).service),
    spec: {
      clusterIP: 'None',
      selector: labels(cluster),
      ports: [{ name: spec.engine, port: ENGINES[spec.engine].port }],
    },
  });
}

export function desiredConfigMap(cluster: KubeObject, spec: DatabaseClusterSpec): ApplyBody {
  const engineConfig =
    spec.engine === 'postgres'
      ? `max_connections = ${50 * spec.replicas}\nwal_level = replica\n`
      : `[mysqld]\nmax_connections=${50 * spec.replicas}\nbinlog_format=ROW\n`;
  return objectOf(kinds.ConfigMap, {
    metadata: meta(cluster, names(cluster).configMap),
    data: {
      [spec.engine === 'postgres' ? 'postgresql.conf' : 'my.cnf']: engineConfig,
      'backup-schedule': spec.backup?.schedule ?? '',
      'backup-retention-days': String(spec.backup?.retentionDays ?? 0),
    },
  });
}

export function desiredStatefulSet(cluster: KubeObject, spec: DatabaseClusterSpec): ApplyBody {
  const engine = ENGINES[spec.engine];
  const { secret, service } = names(cluster);
  return objectOf(kinds.StatefulSet, {
    metadata: meta(cluster, names(cluster).statefulSet),
    spec: {
      serviceName: service,
      replicas: spec.replicas,
      selector: { matchLabels: labels(cluster) },
      template: {
        metadata: { labels: labels(cluster) },
        spec: {
          containers: [
            {
              name: spec.engine,
              image: `${engine.image}:${spec.version}`,
              ports: [{ name: spec.engine, containerPort: engine.port }],
              env: [
                {
                  name: engine.passwordEnv,
                  valueFrom: { secretKeyRef: { name: secret, key: 'password' } },
                },
              ],
              volumeMounts: [{ name: 'data', mountPath: engine.dataDir }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: spec.storage.size } },
          },
        },
      ],
    },
  });
}

/**
 * On the credentials Secret: 'false' from its creation until the CredentialsCreated
 * Event is posted, then 'true'. Creating the Secret and posting the Event are two
 * writes, and a reconcile may die between them; the mark lets the retry finish the
 * announcement. Secrets made before the mark existed lack it: announced already.
 */
export const CREDENTIALS_ANNOUNCED = 'example.kubebus.dev/credentials-announced';

/** Whether the credentials Secret (as recorded) was created and its Event not yet posted. */
export function awaitsAnnouncement(
  secret: { readonly metadata: { readonly annotations?: Annotations | undefined } } | undefined,
): boolean {
  return secret?.metadata.annotations?.[CREDENTIALS_ANNOUNCED] === 'false';
}

/** The credentials, generated once: created if absent and never updated, logged or published. */
export function newCredentials(cluster: KubeObject, spec: DatabaseClusterSpec): ApplyBody {
  return objectOf(kinds.Secret, {
    metadata: {
      ...meta(cluster, names(cluster).secret),
      annotations: { [CREDENTIALS_ANNOUNCED]: 'false' },
    },
    type: 'Opaque',
    stringData: {
      username: spec.engine === 'postgres' ? 'postgres' : 'root',
      password: randomBytes(24).toString('base64url'),
    },
  });
}

/** The mark that the credentials' Event was posted: only metadata, the data stays as created. */
export function announcedCredentials(cluster: KubeObject): ApplyBody {
  return objectOf(kinds.Secret, {
    metadata: {
      ...meta(cluster, names(cluster).secret),
      annotations: { [CREDENTIALS_ANNOUNCED]: 'true' },
    },
  });
}
