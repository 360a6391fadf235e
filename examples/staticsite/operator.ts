// A static web site: a page in a ConfigMap, served by an nginx Deployment
// behind a Service. The smallest useful kubebus operator.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const StaticSite = defineResource({
  group: 'sites.example.com',
  version: 'v1',
  kind: 'StaticSite',
  scope: 'Namespaced',
  shortNames: ['site'],
  spec: z.object({
    html: z
      .string()
      .max(512 * 1024)
      .describe('The page to serve'),
    replicas: z.int().min(1).max(10).default(1),
    image: z
      .string()
      // every spec string bounded at admission (kubebus generate warns of one that is not)
      .max(512)
      .default('nginx:1.27-alpine')
      .refine((image) => !image.endsWith(':latest'), 'pin a version: :latest is not reproducible'),
  }),
  status: z.object({ url: z.string(), readyReplicas: z.int() }),
  printerColumns: [{ name: 'URL', type: 'string', jsonPath: '.status.url' }],
});

/** nginx serving the ConfigMap named like the site. */
function nginxPod(name: string, image: string) {
  return {
    containers: [
      {
        name: 'nginx',
        image,
        ports: [{ containerPort: 80 }],
        volumeMounts: [{ name: 'html', mountPath: '/usr/share/nginx/html' }],
      },
    ],
    volumes: [{ name: 'html', configMap: { name } }],
  };
}

export default defineOperator({
  name: 'staticsite',
  for: StaticSite,
  owns: [kinds.ConfigMap, kinds.Deployment, kinds.Service],
  async reconcile(site, ctx) {
    const { name, namespace } = site.metadata;
    const { html, replicas, image } = site.spec;
    const labels = { app: name };
    const page = { 'index.html': html };
    await ctx.apply(kinds.ConfigMap, { metadata: { name }, data: page });
    // typed by kind: a misspelt field does not compile; answers the Deployment as applied
    const deployment = await ctx.apply(kinds.Deployment, {
      metadata: { name, labels },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: nginxPod(name, image) },
      },
    });
    await ctx.apply(kinds.Service, {
      metadata: { name, labels },
      spec: { selector: labels, ports: [{ port: 80, targetPort: 80 }] },
    });
    const ready = deployment.status?.readyReplicas ?? 0;
    const message = `${ready}/${replicas} ready`;
    return {
      status: { url: `http://${name}.${namespace ?? 'default'}.svc`, readyReplicas: ready },
      ready: { status: ready >= replicas, reason: 'Replicas', message },
    };
  },
});
