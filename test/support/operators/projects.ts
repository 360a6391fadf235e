// A namespaced owner with a child in another namespace
// (test/e2e/beyond-owner-reference.test.ts): a Project registers itself with a
// ConfigMap in the shared `registry` namespace, named by its spec, and deletes
// it in finalize. No owner reference can point across namespaces: only the
// kubebus.dev/owner annotation says which Project applied it.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const Project = defineResource({
  group: 'projects.test.kubebus.dev',
  version: 'v1',
  kind: 'Project',
  scope: 'Namespaced',
  spec: z.object({ entry: z.string() }),
  status: z.object({ entry: z.string() }).partial(),
});

export const REGISTRY = 'registry';

const projects = defineOperator({
  name: 'projects',
  for: Project,
  owns: [kinds.ConfigMap],
  async reconcile(project, ctx) {
    const { entry } = project.spec;
    await ctx.apply(kinds.ConfigMap, {
      metadata: { name: entry, namespace: REGISTRY },
      data: { project: `${project.metadata.namespace}/${project.metadata.name}` },
    });
    return { status: { entry } };
  },
  async finalize(project, ctx) {
    await ctx.delete(kinds.ConfigMap, project.spec.entry, REGISTRY);
    return undefined;
  },
});

export default projects;
