# One image for the three services: `docker build --build-arg SERVICE=watcher .`
# Node 22 LTS; the services are bundled by `npm run build` and run with plain node.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY shared/package.json shared/
COPY services/watcher/package.json services/watcher/
COPY services/reconciler/package.json services/reconciler/
COPY services/status-writer/package.json services/status-writer/
COPY services/cli/package.json services/cli/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ARG SERVICE=watcher
ENV NODE_ENV=production SERVICE=${SERVICE}
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER node
EXPOSE 8080
CMD ["sh", "-c", "exec node --enable-source-maps dist/${SERVICE}.js"]
