# One image, the kubebus binary as its entrypoint: every process of the
# DatabaseCluster example is `run dist/operators/databasecluster.js [--role …]`,
# the topology step is `topology apply`. Node 26, the Active LTS (docs/adr/0016);
# everything is bundled by `npm run build` and runs with plain node.
FROM node:26-bookworm-slim AS build
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

FROM node:26-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# numeric (the image's node user): the kubelet checks runAsNonRoot against a uid, not a name
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "--enable-source-maps", "dist/kubebus.js"]
CMD ["--help"]
