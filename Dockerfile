# The conversation worker (and, with another command, the codec server), for docker-compose.yml or any container
# platform. Configured by environment only: see workers/config.ts and docs/deployment.md.
#
#   docker build -t claude-temporal-worker .
#   docker run --env-file worker.env claude-temporal-worker                     the worker
#   docker run --env-file codec.env claude-temporal-worker node --import tsx scripts/codec-server.ts
#
# TypeScript runs through tsx (a runtime dependency), so there is no compile step; the workflow code is bundled here,
# once, so a worker starts in about a second (WORKFLOW_BUNDLE_PATH).
# test/deployment.test.ts replays this file's COPY/RUN/ENV/CMD steps without Docker: keep RUN paths relative to WORKDIR.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY client ./client
COPY codec ./codec
COPY deploy/bundle-workflows.ts ./deploy/bundle-workflows.ts
COPY scripts/codec-server.ts ./scripts/codec-server.ts

RUN node --import tsx deploy/bundle-workflows.ts dist/workflow-bundle.js
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js

USER node
CMD ["node", "--import", "tsx", "workers/main.ts"]
