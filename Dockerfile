# syntax=docker/dockerfile:1
# Keyward as an image: `docker build -t keyward .`, then see compose.yaml. The TypeScript sources
# run through tsx (a runtime dependency), so the image holds no build step, only `npm ci`.

FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
# The workspace package's manifest is needed for `npm ci` to lay out node_modules.
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/package.json
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/keyward \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY packages/client ./packages/client
# DATA_DIR holds the embedded database and admin.key: owned by the unprivileged user, 0700.
RUN mkdir -p /var/lib/keyward && chown node:node /var/lib/keyward && chmod 0700 /var/lib/keyward
USER node
VOLUME ["/var/lib/keyward"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "bin/keyward.js", "serve"]
