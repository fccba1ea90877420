# syntax=docker/dockerfile:1
# The Benchmark Almanac API: a small production image (non-root, health-checked).
#   docker build -t almanac-api .
#   docker run -p 8000:8000 -e ALMANAC_MONGODB_URI=mongodb://... almanac-api
# Without ALMANAC_MONGODB_URI it serves the embedded store in /data (mount a volume to keep it).

# GraphiQL's browser files, from their npm packages (served by the app, no CDN).
FROM node:20-bookworm-slim AS graphiql
WORKDIR /graphiql
COPY server/graphiql/package.json server/graphiql/package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM python:3.11-slim-bookworm AS build
RUN python -m venv /venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY schema schema
COPY releases releases
COPY resolvers resolvers
COPY editing editing
COPY interchange interchange
COPY releases releases
COPY request_limits request_limits
COPY webhooks webhooks
COPY api_errors api_errors
COPY store store
COPY server server
COPY docs docs
RUN /venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --no-create-home almanac \
    && mkdir /data && chown almanac /data
COPY --from=build /venv /venv
COPY --from=graphiql /graphiql/node_modules /opt/graphiql/node_modules
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    ALMANAC_GRAPHIQL_PACKAGES=/opt/graphiql/node_modules \
    ALMANAC_DATA_DIR=/data
VOLUME /data
USER almanac
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
# One worker per container: scale out with more containers behind the load balancer
# (or pass --workers N: on the embedded store too; set ALMANAC_REDIS_URL to share budgets).
CMD ["almanac", "serve", "--host", "0.0.0.0", "--port", "8000"]
