# One image for every process of the service; the compose file picks the command:
#   node server/main/api.ts | node server/main/worker.ts | node server/main/migrate.ts
# The `browser-host` target adds Debian's Chromium, and bubblewrap and socat for the browser
# sandbox, for node server/main/browserHost.ts. It runs as `node`, so each browser runs as `node`
# in user, mount, network and pid namespaces of its own (docs/browsers.md, Threat model): the
# container must allow unprivileged user namespaces (temporal-compose.yml's security_opt).
# Node 24 runs the .ts files directly (type stripping), so there is no build step.
FROM node:24-bookworm-slim AS app

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so source changes do not reinstall them. allowScripts in package.json
# approves the one install script the packages need.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# .dockerignore keeps tests, benchmarks, docs and local data out.
COPY . .

USER node
EXPOSE 3000
CMD ["node", "server/main/api.ts"]

FROM app AS browser-host
USER root
RUN apt-get update \
  && apt-get install -y --no-install-recommends chromium fonts-liberation bubblewrap socat \
  && rm -rf /var/lib/apt/lists/*
USER node
ENV CHROMIUM_PATH=/usr/bin/chromium
CMD ["node", "server/main/browserHost.ts"]
