// Where the apiserver reaches the conversion webhook of a resource served in
// several versions: a URL with its CA (tests, a webhook outside the cluster),
// or the Service `kubebus generate` writes, its CA injected by cert-manager
// (the cert-manager.io/inject-ca-from annotation) or given.
import type { CustomResource } from '@kubebus/shared/definition';

export const CONVERT_PATH = '/convert';

export type ConversionTarget =
  | { readonly url: string; readonly caBundle: string }
  | {
      readonly service: {
        readonly namespace: string;
        readonly name: string;
        readonly port?: number;
      };
      /** base64 PEM; absent: cert-manager injects it from `certificate` */
      readonly caBundle?: string;
      /** "<namespace>/<Certificate name>" for cert-manager's CA injector */
      readonly certificate?: string;
    };

/** The Service (and its Certificate) that fronts the webhook of a resource. */
export function conversionServiceName(resource: Pick<CustomResource, 'plural'>): string {
  return `${resource.plural}-conversion`;
}

/** The default target: the generated Service in `namespace`, its CA from cert-manager. */
export function serviceTarget(resource: CustomResource, namespace: string): ConversionTarget {
  const name = conversionServiceName(resource);
  return { service: { namespace, name, port: 443 }, certificate: `${namespace}/${name}` };
}

export function conversionOf(resource: CustomResource, target?: ConversionTarget) {
  const chosen = target ?? serviceTarget(resource, 'kubebus-system');
  const clientConfig =
    'url' in chosen
      ? { url: chosen.url, caBundle: chosen.caBundle }
      : {
          service: {
            namespace: chosen.service.namespace,
            name: chosen.service.name,
            path: CONVERT_PATH,
            port: chosen.service.port ?? 443,
          },
          ...(chosen.caBundle === undefined ? {} : { caBundle: chosen.caBundle }),
        };
  // a CA given wins over cert-manager's injection
  const inject = 'url' in chosen || chosen.caBundle !== undefined ? undefined : chosen.certificate;
  return {
    conversion: {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig },
    },
    ...(inject === undefined ? {} : { annotations: { 'cert-manager.io/inject-ca-from': inject } }),
  };
}
