# Production image for the API and the worker (same image, different command).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Exactly the lockfile's versions (docs/dependencies.md), with only the approved install scripts.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
USER node
EXPOSE 3000
# `api` or `worker`; both need DATABASE_URL and TEMPORAL_ADDRESS (nothing embedded in production).
CMD ["node", "bin/malipo.mjs", "api"]
