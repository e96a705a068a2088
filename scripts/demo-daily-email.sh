#!/usr/bin/env bash
# demo-daily-email.sh — the story Rota exists for, runnable.
#
# Act one: three app servers with the same crontab line and no coordination; the mail server counts what
# every student got (three emails each). Act two: the same three app servers run the 08:00 "daily learning
# reminder" job with Rota over ~100 students, on a compressed clock (a day lasts a few seconds), for
# several days. Mid-run the script kill -9s the instance running day 2's job and SIGSTOPs the one running
# day 3's past its lease with a reminder in flight, then SIGCONTs it; the mail server's fencing check
# refuses that late reminder. It prints one line per day, the faults and what followed them, the totals
# (sent / duplicates / missing / stale writes rejected) and the job's history, and exits non-zero unless
# every student got exactly one reminder each day.
#
#   scripts/demo-daily-email.sh                       # 5 days of 20 s, 100 students
#   scripts/demo-daily-email.sh --days 3 --day-seconds 15 --students 50
#   scripts/demo-daily-email.sh --endpoints 127.0.0.1:8001,127.0.0.1:8002,127.0.0.1:8003
#   scripts/demo-daily-email.sh --help                # every option; starts nothing
#
# The cluster: --endpoints if given, else $ROTA_ENDPOINTS if set, else the local cluster, started with
# scripts/cluster.sh start if it is not running.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/examples/daily-reminder/target/rota-examples.jar"

help=false
endpoints_given=false
for arg in "$@"; do
  case "$arg" in
    -h|--help|-V|--version) help=true ;;
    --endpoints|--endpoints=*) endpoints_given=true ;;
  esac
done

if $help; then
  if [[ -f "$JAR" ]]; then
    exec java -jar "$JAR" "$@"
  fi
  # No jar yet: the usage above, without building or starting anything.
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  echo "Every option: build first (./mvnw -B -DskipTests package), then scripts/demo-daily-email.sh --help"
  exit 0
fi

if [[ ! -f "$JAR" || ! -f "$ROOT/kv-server/target/rota-server.jar" ]]; then
  echo "demo: building the jars (first run; ./mvnw -B -DskipTests package) ..." >&2
  (cd "$ROOT" && ./mvnw -q -B -DskipTests package)
fi

if $endpoints_given; then
  exec java ${ROTA_JAVA_OPTS:-} -jar "$JAR" "$@"
fi
from="ROTA_ENDPOINTS"
if [[ -z "${ROTA_ENDPOINTS:-}" ]]; then
  echo "demo: making sure the local cluster runs (scripts/cluster.sh start) ..." >&2
  eval "$("$ROOT/scripts/cluster.sh" start | grep '^ROTA_ENDPOINTS=' | sed 's/^/export /')"
  [[ -n "${ROTA_ENDPOINTS:-}" ]] || { echo "demo: scripts/cluster.sh start printed no ROTA_ENDPOINTS" >&2; exit 1; }
  from="scripts/cluster.sh's cluster in ${ROTA_CLUSTER_DIR:-$ROOT/data}"
fi
# Said before anything runs, so a wrong cluster is recognised (and the setting to fix is named).
echo "demo: cluster at $ROTA_ENDPOINTS (from $from)" >&2
exec java ${ROTA_JAVA_OPTS:-} -jar "$JAR" --endpoints "$ROTA_ENDPOINTS" "$@"
