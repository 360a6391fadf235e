// Every image kubebus ships a reference to, where it is, and the one setting
// a release pins it by digest through: a Dockerfile's build argument, a
// compose variable in .env, a kustomize `images:` entry, the chart's
// image.digest. No digest is resolved here (that needs a registry): this
// finds references that no setting reaches, and, for a release, the ones
// still named by tag.
import { parse } from 'yaml';
import { parseDockerfile } from './dockerfile-stages.js';

export interface ImageReference {
  /** the image as it would be pulled */
  readonly image: string;
  /** the file, and what in it */
  readonly where: string;
  /** how a release pins it; '' when nothing but an edit of the file can */
  readonly setting: string;
}

const DIGEST = /@sha256:[0-9a-f]{64}$/;

export const isPinned = (image: string) => DIGEST.test(image);

/** FROM lines; each image must come from a global ARG (`--build-arg`). */
export function dockerfileImages(
  where: string,
  text: string,
  buildArgs: Readonly<Record<string, string>>,
): ImageReference[] {
  const { stages } = parseDockerfile(text, buildArgs);
  const names = new Set(stages.flatMap((stage) => (stage.name === undefined ? [] : [stage.name])));
  return stages
    .filter((stage) => !names.has(stage.from))
    .map((stage) => {
      const arg = /^\$\{?(\w+)\}?$/.exec(stage.fromAsWritten)?.[1];
      return {
        image: stage.from,
        where: `${where} FROM ${stage.fromAsWritten}`,
        setting: arg === undefined ? '' : `--build-arg ${arg}`,
      };
    });
}

/** Services' images (built ones aside); each must be a variable (`${VAR:?…}`) from .env. */
export function composeImages(
  where: string,
  text: string,
  env: Readonly<Record<string, string>>,
): ImageReference[] {
  const services = (
    parse(text) as { services?: Record<string, { image?: string; build?: unknown }> }
  ).services;
  return Object.entries(services ?? {}).flatMap(([name, service]) => {
    if (service.image === undefined || service.build !== undefined) return [];
    const variable = /^\$\{(\w+)(?::?[-?][^}]*)?\}$/.exec(service.image)?.[1];
    return [
      {
        image: variable === undefined ? service.image : (env[variable] ?? ''),
        where: `${where} service ${name}`,
        setting: variable === undefined ? '' : `${variable} in .env`,
      },
    ];
  });
}

/** Containers' images in rendered manifests (kustomize build): an `images:` entry pins each. */
export function manifestImages(where: string, manifests: readonly unknown[]): ImageReference[] {
  const found: ImageReference[] = [];
  const walk = (node: unknown, kind: string) => {
    if (Array.isArray(node)) for (const item of node) walk(item, kind);
    else if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        if ((key === 'containers' || key === 'initContainers') && Array.isArray(child))
          for (const container of child as { name?: string; image?: unknown }[])
            if (typeof container.image === 'string')
              found.push({
                image: container.image,
                where: `${where} ${kind} container ${container.name ?? '?'}`,
                setting: `images: [{ name: ${container.image.split(/[:@]/)[0] ?? ''}, digest: … }] in the overlay`,
              });
        walk(child, kind);
      }
    }
  };
  for (const manifest of manifests) {
    const { kind, metadata } = manifest as { kind?: string; metadata?: { name?: string } };
    walk(manifest, `${kind ?? '?'}/${metadata?.name ?? '?'}`);
  }
  return uniqueBy(found);
}

/** The chart's image: repository@digest when image.digest is set, else by tag. */
export function helmImages(where: string, valuesText: string): ImageReference[] {
  const image = (parse(valuesText) as { image?: Record<string, string | undefined> }).image ?? {};
  const repository = image['repository'] ?? '';
  const digest = image['digest'] ?? '';
  return [
    {
      image:
        digest === ''
          ? `${repository}:${image['tag'] === '' ? '(appVersion)' : (image['tag'] ?? '')}`
          : `${repository}@${digest}`,
      where: `${where} image`,
      setting: 'image.digest in the values',
    },
  ];
}

/** One line per reference: pinned or by tag, and how to pin it. */
export function describeImage(reference: ImageReference): string {
  const state = isPinned(reference.image)
    ? 'pinned'
    : reference.setting === ''
      ? 'FIXED '
      : 'by tag';
  const how = reference.setting === '' ? 'no setting reaches it' : `pin with ${reference.setting}`;
  return `${state}  ${reference.image}  ${reference.where} (${how})`;
}

function uniqueBy(references: readonly ImageReference[]): ImageReference[] {
  const seen = new Map<string, ImageReference>();
  for (const reference of references) {
    const key = `${reference.image} ${reference.where}`;
    if (!seen.has(key)) seen.set(key, reference);
  }
  return [...seen.values()];
}
