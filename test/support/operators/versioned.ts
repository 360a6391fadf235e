// An operator whose versions differ in what they write: each reconcile of a
// Widget applies a ConfigMap labelled with the version that reconciled it.
// versioned-v1.ts and versioned-v2.ts are two releases of one operator, for
// the upgrade test (every object reconciled again by the new version);
// versioned-8-partitions.ts splits its work into 8, for the repartition test.
import { defineOperator, kinds } from 'kubebus';
import { Widget } from './widgets.js';

export function versionedOperator(version: string, partitions = 4) {
  return defineOperator({
    name: 'versioned',
    for: Widget,
    owns: [kinds.ConfigMap],
    partitions,
    async reconcile(widget, ctx) {
      await ctx.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${widget.metadata.name}-state`, labels: { 'reconciled-by': version } },
        data: { version },
      });
    },
  });
}
