// The pattern every kubebus image follows, the repository's own `Dockerfile`
// and the one `kubebus init` writes: the base images are build arguments (a
// release pins them by digest, scripts/check-pinned-images.ts refuses them
// unpinned), the build stage installs from the lockfile on the node image, and
// the runtime stage is Debian slim of the node image's release with the node
// binary alone — no npm, npx or corepack, nothing that installs or runs
// packages. test/integration/dockerfile.test.ts checks both files against it.

/** The build stage's image (node's Debian release decides the runtime's). */
export const NODE_IMAGE = 'node:26-bookworm-slim';
/** The runtime stage's image: Debian slim of the same release, so node finds its libc. */
export const RUNTIME_IMAGE = 'debian:bookworm-slim';
/** The build arguments that name them, with the tags as defaults. */
export const IMAGE_ARGS = { NODE_IMAGE, RUNTIME_IMAGE } as const;

/** The top of a Dockerfile: the two images as build arguments, pinnable in one place each. */
export function imageArgLines(): string[] {
  return [
    '# The base images, by tag; a release pins each by digest:',
    '#   --build-arg NODE_IMAGE=node:…@sha256:… --build-arg RUNTIME_IMAGE=debian:…@sha256:…',
    ...Object.entries(IMAGE_ARGS).map(([name, image]) => `ARG ${name}=${image}`),
  ];
}

/** The runtime stage's first lines: Debian slim, production, the node binary from `build`. */
export function runtimeStageHead(): string[] {
  return [
    'FROM ${RUNTIME_IMAGE}',
    'ENV NODE_ENV=production',
    '# node alone, from the build stage (it needs only libc, libstdc++ and libgcc_s,',
    '# which Debian slim has): no package manager for JavaScript in the runtime',
    'COPY --from=build /usr/local/bin/node /usr/local/bin/node',
  ];
}
