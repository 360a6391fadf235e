// The Pod Security Standards' restricted profile, for every generated pod:
// a numeric non-root uid (the kubelet checks runAsNonRoot against a uid, not
// a user name), the runtime's seccomp profile, no capabilities, no privilege
// escalation, a read-only root filesystem with an emptyDir for /tmp.

/** The uid and gid of the image's node user. */
export const UID = 1000;

export const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: UID,
  runAsGroup: UID,
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

export const containerSecurityContext = {
  runAsNonRoot: true,
  runAsUser: UID,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** tsx and Node write temporary files; the root filesystem is read-only. */
export const tmpVolume = { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } } as const;
export const tmpMount = { name: 'tmp', mountPath: '/tmp' } as const;
