# The conversation worker (and, with another command, the codec server), for docker-compose.yml or any container
# platform. Configured by environment only: see workers/config.ts and docs/deployment.md.
#
#   docker build -t claude-temporal-worker .
#   docker run --env-file worker.env claude-temporal-worker                                the worker
#   docker run --env-file codec.env claude-temporal-worker node dist/codec/server-main.js   the codec server
#
# Two stages: `build` compiles the TypeScript and pre-bundles the workflow code (npm run build -- --all-bundles →
# dist/, with every variant in dist/workflow-bundles/ so a worker starts without running webpack, encrypted or traced); the image itself has only the runtime
# dependencies (npm ci --omit=dev) and dist/, and runs plain node.
# test/e2e/deployment.test.ts replays this file's steps without Docker: keep RUN paths relative to WORKDIR.
FROM node:20-slim AS build

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY common ./common
COPY workflows ./workflows
COPY streaming ./streaming
COPY activities ./activities
COPY workers ./workers
COPY client ./client
COPY codec ./codec
COPY testing ./testing
COPY tracing ./tracing
COPY gateway ./gateway
COPY scripts/build-package.ts scripts/script-main.ts ./scripts/
RUN npm run build -- --all-bundles

FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist

USER node
CMD ["node", "dist/workers/main.js"]
