# One image, the kubebus binary as its entrypoint: every process of the
# DatabaseCluster example is `run dist/operators/databasecluster.js [--role …]`,
# the topology step is `topology apply`. Node 26, the Active LTS (docs/adr/0016);
# everything is bundled by `npm run build` and runs with plain node.
#
# Two stages. `build` installs from the lockfile (`npm ci`: the versions and
# integrity hashes in package-lock.json, nothing resolved anew) and bundles.
# The runtime stage is Debian slim — the same release the node image is built
# on — with only the node binary copied in: no npm, npx or corepack, nothing
# that installs or runs packages (docs/security.md, "The image"). The pattern,
# the images' tags included, is packages/kubebus/src/cli/runtime-image.ts's,
# which `kubebus init`'s Dockerfile follows too (test/integration/dockerfile.test.ts).
# The base images, by tag; a release pins each by digest:
#   --build-arg NODE_IMAGE=node:…@sha256:… --build-arg RUNTIME_IMAGE=debian:…@sha256:…
ARG NODE_IMAGE=node:26-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY shared/package.json shared/
COPY services/watcher/package.json services/watcher/
COPY services/reconciler/package.json services/reconciler/
COPY services/status-writer/package.json services/status-writer/
COPY services/cli/package.json services/cli/
COPY packages/kubebus/package.json packages/kubebus/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM ${RUNTIME_IMAGE}
ENV NODE_ENV=production
# node alone, from the build stage (it needs only libc, libstdc++ and libgcc_s,
# which Debian slim has): no package manager for JavaScript in the runtime
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# numeric (the node image's uid): the kubelet checks runAsNonRoot against a uid, not a name
USER 1000:1000
EXPOSE 8080 8443
ENTRYPOINT ["node", "--enable-source-maps", "dist/kubebus.js"]
CMD ["--help"]
