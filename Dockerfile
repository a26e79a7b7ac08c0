# cribbage-server: the multiplayer server (see docs/protocol.md).
#
# Two stages on Debian bookworm with Debian's Python 3.11: the first installs the package
# and its dependencies into a virtual environment, the second copies only that environment
# onto a clean base with Python's runtime, so neither the source, nor a build directory,
# nor pip, nor a compiler's leftovers stay in the image. The base is named by its upstream
# tag; CI, which has no image registry, makes a stand-in of it with debootstrap
# (.ci/containers.sh, docs/operations.md "Containers in CI"), so the image is the same here
# and on a machine that pulls debian:bookworm-slim.
FROM debian:bookworm-slim AS build

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv --without-pip /opt/cribbage
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY protocol ./protocol
COPY server ./server
RUN pip3 --python /opt/cribbage/bin/python install --break-system-packages . \
    && find /opt/cribbage -name __pycache__ -prune -exec rm -rf {} + \
    && /opt/cribbage/bin/python -m compileall -q /opt/cribbage/lib

FROM debian:bookworm-slim

LABEL org.opencontainers.image.title=cribbage-server
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/cribbage/bin:$PATH
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 cribbage
COPY --from=build /opt/cribbage /opt/cribbage

USER 10001
WORKDIR /home/cribbage
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz').status == 200 else 1)"]
ENTRYPOINT ["cribbage-server", "--host", "0.0.0.0", "--port", "8000"]
