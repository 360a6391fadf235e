// nats-server reads its certificates only at start or on SIGHUP; cert-manager
// renews them at about 2/3 of their lifetime, in place in the mounted Secret.
// The config reloader (a sidecar, as in the official NATS Helm chart) watches
// the configuration and the TLS files and sends nats-server SIGHUP when one
// changes: it finds the server's pid in a file on a shared emptyDir, and
// signals it across the pod's shared process namespace.
import { containerSecurityContext } from './pod-security.js';
import { CLUSTER_FILE, NATS_TLS_DIR, mountedTlsFiles } from './nats-tls-config.js';

export const NATS_CONFIG_RELOADER_IMAGE = 'natsio/nats-server-config-reloader:0.23.0';
export const NATS_CONFIG_DIR = '/etc/nats';
export const NATS_CONFIG_FILE = `${NATS_CONFIG_DIR}/nats-server.conf`;
const PID_DIR = '/var/run/nats';
/** nats-server writes its pid here (`--pid`); the reloader reads it */
export const NATS_PID_FILE = `${PID_DIR}/nats.pid`;

export const pidVolume = { name: 'pid', emptyDir: { sizeLimit: '1Mi' } } as const;
export const pidMount = { name: 'pid', mountPath: PID_DIR } as const;

/** The sidecar; the NATS container mounts `config` and `tls` at the same paths. */
export function natsConfigReloader(): object {
  const watched = [
    NATS_CONFIG_FILE,
    `${NATS_CONFIG_DIR}/${CLUSTER_FILE}`,
    mountedTlsFiles.cert,
    mountedTlsFiles.key,
    mountedTlsFiles.ca,
  ];
  return {
    name: 'reloader',
    image: NATS_CONFIG_RELOADER_IMAGE,
    args: ['-pid', NATS_PID_FILE, ...watched.flatMap((file) => ['-config', file])],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
    // copies: an object shared with the NATS container would be written as a YAML alias
    securityContext: structuredClone(containerSecurityContext),
    volumeMounts: [
      { ...pidMount },
      { name: 'config', mountPath: NATS_CONFIG_DIR, readOnly: true },
      { name: 'tls', mountPath: NATS_TLS_DIR, readOnly: true },
    ],
  };
}
