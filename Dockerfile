# syntax=docker/dockerfile:1
#
# The team server: `colibri-router serve --http` with the PostgreSQL store (the `postgres` extra).
# Two stages: uv builds the wheel and installs it, with the locked dependencies and the postgres
# extra, into a venv; the final image is slim Python with that venv only, run by an unprivileged
# user. Everything that differs per deployment comes from the environment at run time, never from
# the image: COLIBRI_DATABASE_URL, COLIBRI_HTTP_TOKENS_FILE (a file mounted read-only),
# COLIBRI_HTTP_ALLOWED_HOSTS and the provider keys. compose.yaml starts it with PostgreSQL.
#
#   docker build -t colibri-router .

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim AS builder

# uv from PyPI, as .ci/run installs it.
RUN python -m pip install --no-cache-dir --disable-pip-version-check "uv>=0.9,<1"
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never
WORKDIR /build

# The dependencies first, exactly as locked (their own layer: it changes only with uv.lock).
COPY pyproject.toml uv.lock ./
RUN uv venv --python /usr/local/bin/python /opt/colibri \
 && uv export --frozen --no-dev --no-emit-project --extra postgres --output-file /tmp/requirements.txt \
 && uv pip install --python /opt/colibri/bin/python --require-hashes --requirement /tmp/requirements.txt

# Then the wheel, built from the source and installed with its postgres extra.
COPY README.md server.json ./
COPY src ./src
RUN uv build --wheel --out-dir /tmp/dist \
 && uv pip install --python /opt/colibri/bin/python "$(ls /tmp/dist/colibri_router-*.whl)[postgres]" \
 && uv pip check --python /opt/colibri/bin/python


FROM python:${PYTHON_VERSION}-slim

LABEL org.opencontainers.image.title="colibri-router" \
      org.opencontainers.image.description="MCP server routing prompts and tool loops to other models: the team server" \
      org.opencontainers.image.licenses="MIT" \
      io.modelcontextprotocol.server.name="io.github.colibri-router/colibri-router"

RUN groupadd --system --gid 10001 colibri \
 && useradd --system --uid 10001 --gid colibri --create-home --home-dir /home/colibri \
      --shell /usr/sbin/nologin colibri

COPY --from=builder /opt/colibri /opt/colibri
ENV PATH="/opt/colibri/bin:${PATH}" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

# Numeric, so that an orchestrator can tell the user is not root without reading /etc/passwd.
USER 10001:10001
WORKDIR /home/colibri
EXPOSE 8000

# /healthz answers without a token (and without the Host check the MCP endpoint makes).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]

ENTRYPOINT ["colibri-router"]
CMD ["serve", "--http", "--host", "0.0.0.0", "--port", "8000"]
