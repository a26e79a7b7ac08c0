#!/bin/sh
# The redis-init job of docker-compose.cluster.yml: make the nodes given as arguments
# (ADDRESS:PORT ..., six of them: three primaries and a replica each) one Redis Cluster,
# or, if they already form one, check that it is whole and wait until it is.
#
#   sh redis-cluster-init.sh 172.30.18.11:6379 ... 172.30.18.16:6379
#
# Whole means, as every node sees it: the cluster is ok, all 16384 slots are served, it
# knows exactly the given nodes, each at its given address and connected (no node marked
# fail, noaddr or handshake), and every primary has a replica. `cluster_state:ok` alone
# says none of that: after Docker gave the nodes other addresses, two nodes stayed
# "noaddr disconnected" for good while every node said ok (issue 17).
#
# A node that lost sight of the others (e.g. an address changed) is introduced to them
# again (CLUSTER MEET with every given address: a known node met at a new address is
# recognised by its id and its address updated). Exits 0 once the cluster is whole, and
# 1 with what is wrong if it is not within INIT_TIMEOUT seconds (default 60): the servers
# then do not start on a broken cluster.
set -eu

timeout=${INIT_TIMEOUT:-60}
replicas=1
count=$#
[ "$count" -ge 3 ] || { echo "redis-init: give the nodes as ADDRESS:PORT" >&2; exit 2; }

cli() {
  cli_at=$1
  shift
  redis-cli -h "${cli_at%:*}" -p "${cli_at#*:}" "$@"
}

# The value of FIELD $2 in node $1's CLUSTER INFO (empty if the node does not answer).
info() {
  cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"
}

# What is wrong with the cluster as node $1 sees it, one line per fault; nothing if whole.
# The other arguments are every node's address.
faults() {
  node=$1
  shift
  if ! text="$(cli "$node" cluster info 2>&1 | tr -d '\r')" \
      || ! printf '%s\n' "$text" | grep -q '^cluster_state:'; then
    echo "$node: no answer ($text)"
    return
  fi
  field() { printf '%s\n' "$text" | sed -n "s/^$1://p"; }
  [ "$(field cluster_state)" = ok ] || echo "$node: cluster_state:$(field cluster_state)"
  [ "$(field cluster_slots_ok)" = 16384 ] \
    || echo "$node: $(field cluster_slots_ok) of 16384 slots ok"
  [ "$(field cluster_known_nodes)" = "$count" ] \
    || echo "$node: knows $(field cluster_known_nodes) nodes, not $count"
  # CLUSTER NODES: id address flags primary ping pong epoch link slots...; the address
  # is ip:port@busport (and ,hostname).
  cli "$node" cluster nodes | tr -d '\r' | awk -v given="$*" -v node="$node" '
    BEGIN { n = split(given, g, " "); for (i = 1; i <= n; i++) want[g[i]] = 1 }
    {
      split($2, a, "[@,]"); addr = a[1]
      if (!(addr in want)) print node ": node " $1 " at unexpected address " $2
      seen[addr] = 1
      if ($3 ~ /(fail|noaddr|handshake)/) print node ": node " addr " is " $3
      if ($8 != "connected") print node ": node " addr " is " $8
      if ($3 ~ /master/ && NF >= 9) primary[$1] = addr
      if ($3 ~ /slave/ && $3 !~ /fail/) replicas_of[$4]++
    }
    END {
      for (addr in want) if (!(addr in seen)) print node ": does not know " addr
      for (id in primary) if (replicas_of[id] < 1) print node ": primary " primary[id] " has no replica"
    }'
}

all_faults() {
  for n in "$@"; do faults "$n" "$@"; done
}

# Every node knows only itself and serves no slot: a new cluster.
fresh() {
  for n in "$@"; do
    [ "$(info "$n" cluster_known_nodes)" = 1 ] && [ "$(info "$n" cluster_slots_assigned)" = 0 ] \
      || return 1
  done
}

meet_all() {
  for n in "$@"; do
    for m in "$@"; do
      [ "$n" = "$m" ] || cli "$n" cluster meet "${m%:*}" "${m#*:}" >/dev/null || true
    done
  done
}

if fresh "$@"; then
  echo "redis-init: creating the cluster of $*"
  redis-cli --cluster create "$@" --cluster-replicas "$replicas" --cluster-yes
else
  echo "redis-init: the nodes already form a cluster; checking it"
fi

start=$(date +%s)
met=0
while :; do
  problems="$(all_faults "$@")"
  if [ -z "$problems" ]; then
    echo "redis-init: the cluster is whole ($count nodes, every slot served, every primary replicated)"
    exit 0
  fi
  elapsed=$(( $(date +%s) - start ))
  if [ "$elapsed" -ge "$timeout" ]; then
    echo "redis-init: the cluster is not whole after ${timeout} s:" >&2
    echo "$problems" >&2
    exit 1
  fi
  # Gossip heals most faults within a few seconds; past that, introduce the nodes again
  # (every 5 s while faults last).
  if [ "$elapsed" -ge 5 ] && [ $(( elapsed - met )) -ge 5 ]; then
    echo "redis-init: still not whole after ${elapsed} s; introducing the nodes again:"
    echo "$problems"
    meet_all "$@"
    met=$elapsed
  fi
  sleep 1
done
