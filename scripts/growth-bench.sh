#!/usr/bin/env bash
# growth-bench.sh — does a loaded cluster stay flat in heap and disk?  scripts/growth-bench.sh [--minutes N]
#
# Starts three members (real processes, -Xmx512m each) with cluster.sh, loads 100,000 keys of 256 B,
# 10,000 leases (a key on each) and 1,000 watchers, then overwrites keys (1,000/s) and keeps every lease
# alive for N minutes (default 10), printing each member's heap (/metrics) and data directory (du) every
# 30 s; at the end, a Markdown table of the samples and whether heap and disk stayed flat. Exit 0 if
# both did. The load client is io.rota.server.bench.GrowthBench (system-tests test sources).
#
# Environment: ROTA_BASE_PORT (default 7500: the bench does not collide with a cluster.sh cluster),
# ROTA_CLUSTER_DIR (default ./data/growth-bench, wiped first), ROTA_JAVA_OPTS (default -Xmx512m).
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MINUTES=10
while (($#)); do
  case "$1" in
    --minutes) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "growth-bench.sh: --minutes needs a whole number" >&2; exit 2; }
               MINUTES="$2"; shift 2 ;;
    *) echo "usage: scripts/growth-bench.sh [--minutes N]" >&2; exit 2 ;;
  esac
done

export ROTA_BASE_PORT="${ROTA_BASE_PORT:-7500}"
export ROTA_JAVA_OPTS="${ROTA_JAVA_OPTS:--Xmx512m}"
DEFAULT_DIR="$ROOT/data/growth-bench"
export ROTA_CLUSTER_DIR="${ROTA_CLUSTER_DIR:-$DEFAULT_DIR}"
if [[ "$ROTA_CLUSTER_DIR" == "$DEFAULT_DIR" ]]; then
  rm -rf "$DEFAULT_DIR"
elif [[ -n "$(ls -A "$ROTA_CLUSTER_DIR" 2>/dev/null)" ]]; then
  echo "growth-bench.sh: $ROTA_CLUSTER_DIR is not empty; the bench needs a fresh cluster" >&2; exit 1
fi

JAR="$ROOT/kv-server/target/rota-server.jar"
CLASSES="$ROOT/tests/system-tests/target/test-classes"
if [[ ! -f "$JAR" || ! -f "$CLASSES/io/rota/server/bench/GrowthBench.class" ]]; then
  echo "building the server jar and the bench (./mvnw -B -DskipTests package) ..."
  (cd "$ROOT" && ./mvnw -B -q -DskipTests package)
fi

CLUSTER="$ROOT/scripts/cluster.sh"
trap '"$CLUSTER" stop' EXIT
"$CLUSTER" start

endpoints="" https="" dirs=""
for i in 1 2 3; do
  endpoints+="${endpoints:+,}127.0.0.1:$((ROTA_BASE_PORT + i))"
  https+="${https:+,}127.0.0.1:$((ROTA_BASE_PORT + 200 + i))"
  dirs+="${dirs:+,}$ROTA_CLUSTER_DIR/n$i"
done
echo "growth bench: $MINUTES minute(s), members with $ROTA_JAVA_OPTS, output also in $ROTA_CLUSTER_DIR/growth-bench.txt"
java -Xmx1g -cp "$CLASSES:$JAR" io.rota.server.bench.GrowthBench "$MINUTES" "$endpoints" "$https" "$dirs" \
  | tee "$ROTA_CLUSTER_DIR/growth-bench.txt"
