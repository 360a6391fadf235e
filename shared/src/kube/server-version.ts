// The Kubernetes floor: kubebus relies on CRD validation rules (CEL,
// x-kubernetes-validations, GA in 1.29), server-side apply,
// events.k8s.io/v1, and the ValidatingAdmissionPolicies `kubebus generate`
// writes (admissionregistration.k8s.io/v1, GA in 1.30: what keeps the
// reconciler off objects it did not make). Each service asks the apiserver's /version at start and
// refuses an older one in one line; an apiserver that does not answer yet is
// waited for (it is not a version problem).
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCodes, KubebusError } from '../errors/mod.js';
import type { Logger } from '../obs/logger.js';
import { backoffDelay } from '../runtime/backoff.js';
import type { KubeClient } from './client.js';

export const MIN_KUBERNETES = { major: 1, minor: 30 } as const;

interface VersionInfo {
  readonly major?: string;
  readonly minor?: string;
  readonly gitVersion?: string;
}

/** major.minor of a /version answer ("1", "29+" → 1.29), or undefined. */
export function kubernetesVersion(info: VersionInfo): { major: number; minor: number } | undefined {
  const major = Number.parseInt(info.major ?? '', 10);
  const minor = Number.parseInt(info.minor ?? '', 10);
  if (Number.isInteger(major) && Number.isInteger(minor)) return { major, minor };
  const match = /^v?(\d+)\.(\d+)/.exec(info.gitVersion ?? '');
  return match === null ? undefined : { major: Number(match[1]), minor: Number(match[2]) };
}

export function supportedKubernetes(version: { major: number; minor: number }): boolean {
  return (
    version.major > MIN_KUBERNETES.major ||
    (version.major === MIN_KUBERNETES.major && version.minor >= MIN_KUBERNETES.minor)
  );
}

export async function requireKubernetesVersion(client: KubeClient, log: Logger): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let info: VersionInfo;
    try {
      info = await client.request<VersionInfo>('/version', { timeoutMs: 10_000 });
    } catch (error) {
      const retryInMs = backoffDelay({ baseMs: 500, capMs: 30_000 }, attempt);
      log.warn(
        { retryInMs, err: error },
        'cannot ask the apiserver for its version yet (retrying)',
      );
      await sleep(retryInMs);
      continue;
    }
    const version = kubernetesVersion(info);
    if (version !== undefined && !supportedKubernetes(version))
      throw new KubebusError(
        ErrorCodes.UnsupportedServer,
        `kube-apiserver ${info.gitVersion ?? `${version.major}.${version.minor}`} is too old: kubebus needs Kubernetes >= ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} (CRD validation rules, server-side apply)`,
      );
    return;
  }
}
