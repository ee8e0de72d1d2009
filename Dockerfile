# The service's image: one image for the API (the default command), the workers (npm run worker:prod)
# and the one-shot migration (node dist/cli/migrate.js). NODE_IMAGE names the base image, for a
# deployer who pulls from a mirror of their own.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# What npm ci's postinstall needs (patches, Prisma's schema and generators, the scripts and sources that
# prepare the embedded database), then the build.
COPY package.json package-lock.json prisma.config.ts tsconfig.json tsconfig.build.json ./
COPY patches ./patches
COPY stubs ./stubs
COPY prisma ./prisma
COPY scripts ./scripts
COPY src ./src
RUN npm ci --no-audit --no-fund \
    && npm run build \
    && npm prune --omit=dev --no-audit --no-fund \
    && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    WORKER_PORT=4001
WORKDIR /app
# Owned by root and read-only to the service's user: the process changes none of its own files.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
USER node
EXPOSE 4000 4001
# The API's liveness; the compose file gives the worker its own, on WORKER_PORT. Slim images have no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["npm", "run", "start:prod"]
