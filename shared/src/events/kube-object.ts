// The part of a Kubernetes object kubebus relies on; everything else passes through.
import { z } from 'zod';

export const OwnerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
});

export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().optional(),
    uid: z.string().min(1),
    resourceVersion: z.string().min(1),
    generation: z.number().int().optional(),
    deletionTimestamp: z.string().optional(),
    ownerReferences: z.array(OwnerReferenceSchema).optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
});

export type KubeObject = z.infer<typeof KubeObjectSchema>;
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/** The controller owner reference (controller=true), as controller-runtime's GetControllerOf. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}
