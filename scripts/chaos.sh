#!/usr/bin/env bash
# chaos.sh — a Jepsen-style chaos run against three real Rota server processes on 127.0.0.1, checked for
# linearizability. See docs/RELIABILITY.md.
#
#   scripts/chaos.sh [--nemesis kill|pause|partition|clock|mixed|membership|none] [--workload register|lease|lock]
#                    [--minutes N] [--out DIR] [--seed S] [any other option of `rota-chaos run`, e.g. --clients 20
#                    --rate 1000]
#   scripts/chaos.sh check [--workload register|lease|lock] FILE   check a saved history.jsonl
#
# Defaults: --nemesis mixed --workload register --minutes 2 --out chaos-out/<nemesis>-<time>.
# clock and mixed start the members with --unsafe-fault-injection (clock faults through their HTTP port);
# the other nemeses do not. membership adds, removes and replaces members through the SDK's Cluster API
# (n4, n5, ... with new ids; 3..5 voters); its clients dial fixed slots that follow the members.
# Past about 1,000 ops/s, raise --clients (20 clients reach ~2,000 ops/s on 2 cores).
# Prints one progress line every 10 s and, at the end, the verdict line
#   linearizable: yes|no|unknown  ops: ok=.. failed=.. indeterminate=..  acknowledged writes lost: N  members exited on their own: N
# Exit code: 0 linearizable, nothing lost and no member exited on its own (a crash, a fail-stop, a refusal: not
# a nemesis's kill); 1 a violation or such an exit; 2 undecided (the checker's budget ran out).
# It builds nothing: build once with ./mvnw -B -DskipTests package.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SERVER_JAR="$ROOT/kv-server/target/rota-server.jar"
CHAOS_JAR="$ROOT/tools/chaos/target/rota-chaos.jar"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

for jar in "$SERVER_JAR" "$CHAOS_JAR"; do
  [[ -f "$jar" ]] || { echo "chaos.sh: $jar is missing; build first: ./mvnw -B -DskipTests package" >&2; exit 2; }
done

if [[ "${1:-}" == "check" ]]; then
  shift
  exec "$JAVA" -Xmx2g -jar "$CHAOS_JAR" check "$@"
fi

nemesis=mixed
minutes=2
out=""
rest=()
while (($#)); do
  case "$1" in
    --nemesis) nemesis="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) rest+=("$1"); shift ;;
  esac
done
[[ "$minutes" =~ ^[0-9]+$ ]] && ((minutes > 0)) || { echo "chaos.sh: --minutes must be a positive whole number" >&2; exit 2; }
out="${out:-$ROOT/chaos-out/$nemesis-$(date +%Y%m%d-%H%M%S)}"

# The members run from a copy of the server jar, so a rebuild during a long run cannot pull it away.
mkdir -p "$out"
cp "$SERVER_JAR" "$out/rota-server.jar"
cp "$CHAOS_JAR" "$out/rota-chaos.jar"
exec "$JAVA" -Xmx2g -Drota.jar="$out/rota-server.jar" -jar "$out/rota-chaos.jar" run \
  --nemesis "$nemesis" --seconds "$((minutes * 60))" --out "$out" ${rest[@]+"${rest[@]}"}
