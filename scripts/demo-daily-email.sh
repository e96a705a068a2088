#!/usr/bin/env bash
# demo-daily-email.sh — the story Rota exists for, runnable.
#
# Three app servers each schedule the same "daily learning reminder" job at 08:00 over ~100 students,
# on a compressed clock (a day lasts a few seconds), for several days. A local mail server checks
# fencing tokens and idempotency keys. Mid-run the script kill -9s the instance running day 2's job
# and SIGSTOPs the one running day 3's past its lease, then SIGCONTs it. At the end it prints, per day
# and in total, sent / duplicates / missing / stale writes rejected, and exits non-zero unless every
# student got exactly one reminder each day.
#
#   scripts/demo-daily-email.sh                       # 5 days of 20 s, 100 students
#   scripts/demo-daily-email.sh --days 3 --day-seconds 15 --students 50
#   scripts/demo-daily-email.sh --help                # every option
#
# Uses $ROTA_ENDPOINTS if set; otherwise starts the local cluster (scripts/cluster.sh start) if needed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/examples/target/rota-examples.jar"

if [[ ! -f "$JAR" || ! -f "$ROOT/kv-server/target/rota-server.jar" ]]; then
  echo "demo: building the jars (first run; ./mvnw -B -DskipTests package) ..." >&2
  (cd "$ROOT" && ./mvnw -q -B -DskipTests package)
fi

if [[ -z "${ROTA_ENDPOINTS:-}" ]]; then
  echo "demo: making sure the local cluster runs (scripts/cluster.sh start) ..." >&2
  eval "$("$ROOT/scripts/cluster.sh" start | grep '^ROTA_ENDPOINTS=' | sed 's/^/export /')"
  [[ -n "${ROTA_ENDPOINTS:-}" ]] || { echo "demo: scripts/cluster.sh start printed no ROTA_ENDPOINTS" >&2; exit 1; }
fi
echo "demo: cluster at $ROTA_ENDPOINTS" >&2
exec java ${ROTA_JAVA_OPTS:-} -jar "$JAR" --endpoints "$ROTA_ENDPOINTS" "$@"
