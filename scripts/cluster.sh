#!/usr/bin/env bash
# cluster.sh — a local three-member Rota cluster on 127.0.0.1.
#
#   scripts/cluster.sh start            start n1..n3 (or those not running), wait until all are healthy
#   scripts/cluster.sh stop             SIGTERM every member, wait for each to exit
#   scripts/cluster.sh status           NAME PID CLIENT_ENDPOINT ROLE TERM COMMIT_INDEX
#   scripts/cluster.sh kill N           kill -9 member N (1..3)
#   scripts/cluster.sh pause N          SIGSTOP member N (a frozen process: sockets open, no answers)
#   scripts/cluster.sh resume N         SIGCONT member N
#   scripts/cluster.sh restart N        stop member N (SIGTERM, or it is already dead) and start it again
#
# Ports: client 7001-7003, peer 7101-7103, http 7201-7203; ROTA_BASE_PORT=8000 moves them to
# 8001.., 8101.., 8201... Data, logs and PID files live in ./.rota-cluster (or $ROTA_CLUSTER_DIR).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BASE="${ROTA_BASE_PORT:-7000}"
DIR="${ROTA_CLUSTER_DIR:-$PWD/.rota-cluster}"
N=3
START_TIMEOUT_S="${ROTA_START_TIMEOUT_S:-60}"

client_port() { echo $((BASE + $1)); }
peer_port()   { echo $((BASE + 100 + $1)); }
http_port()   { echo $((BASE + 200 + $1)); }
pid_file()    { echo "$DIR/n$1.pid"; }

die() { echo "cluster.sh: $*" >&2; exit 2; }

member_arg() {
  [[ "${1:-}" =~ ^[1-3]$ ]] || die "name a member: 1, 2 or 3 (got '${1:-}')"
}

pid_of() {
  local f; f="$(pid_file "$1")"
  [[ -f "$f" ]] && cat "$f" || true
}

alive() {
  local pid; pid="$(pid_of "$1")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

initial_cluster() {
  local out="" i
  for i in $(seq 1 $N); do out+="${out:+,}n$i=127.0.0.1:$(peer_port "$i")"; done
  echo "$out"
}

endpoints() {
  local out="" i
  for i in $(seq 1 $N); do out+="${out:+,}127.0.0.1:$(client_port "$i")"; done
  echo "$out"
}

http_get() {
  # Prints the body; the exit status says whether the answer was 200.
  local code
  code="$(curl -s -o /tmp/rota-cluster-$$.body -w '%{http_code}' --max-time 2 "http://127.0.0.1:$(http_port "$1")$2" || true)"
  cat /tmp/rota-cluster-$$.body 2>/dev/null || true
  rm -f /tmp/rota-cluster-$$.body
  [[ "$code" == "200" ]]
}

start_member() {
  local i="$1"
  if alive "$i"; then echo "n$i already running (pid $(pid_of "$i"))"; return; fi
  mkdir -p "$DIR"
  "$ROOT/scripts/rota" server --name "n$i" --data-dir "$DIR/n$i" \
    --listen-client "127.0.0.1:$(client_port "$i")" --listen-peer "127.0.0.1:$(peer_port "$i")" \
    --http "127.0.0.1:$(http_port "$i")" --initial-cluster "$(initial_cluster)" \
    >>"$DIR/n$i.log" 2>&1 &
  echo $! >"$(pid_file "$i")"
  echo "n$i started (pid $!, client 127.0.0.1:$(client_port "$i"), log $DIR/n$i.log)"
}

await_healthy() {
  local deadline=$((SECONDS + START_TIMEOUT_S)) i ok
  while true; do
    ok=1
    for i in "$@"; do
      alive "$i" || die "n$i exited; see $DIR/n$i.log"
      http_get "$i" /health >/dev/null || ok=0
    done
    ((ok)) && return 0
    ((SECONDS < deadline)) || die "not healthy after ${START_TIMEOUT_S}s; see $DIR/n*.log"
    sleep 0.2
  done
}

stop_member() {
  local i="$1" pid deadline
  pid="$(pid_of "$i")"
  if ! alive "$i"; then rm -f "$(pid_file "$i")"; return; fi
  kill -TERM "$pid" 2>/dev/null || true
  kill -CONT "$pid" 2>/dev/null || true   # a paused member must run to handle SIGTERM
  deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then echo "n$i did not stop in 20s; kill -9 $pid"; kill -KILL "$pid"; fi
    sleep 0.1
  done
  rm -f "$(pid_file "$i")"
  echo "n$i stopped"
}

field() { # crude JSON field extraction for the flat /status document
  sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2"
}

cmd="${1:-}"; shift || true
case "$cmd" in
  start)
    command -v curl >/dev/null || die "curl is needed to poll /health"
    for i in $(seq 1 $N); do start_member "$i"; done
    await_healthy $(seq 1 $N)
    echo
    echo "ROTA_ENDPOINTS=$(endpoints)"
    echo
    echo "All three members are healthy. Next:"
    echo "  export ROTA_ENDPOINTS=$(endpoints)"
    echo "  scripts/cluster.sh status          # who leads"
    echo "  scripts/cluster.sh kill 1          # and watch another member take over"
    echo "  scripts/cluster.sh stop"
    ;;
  stop)
    for i in $(seq 1 $N); do stop_member "$i"; done
    ;;
  status)
    printf '%-5s %-8s %-16s %-13s %-6s %s\n' NAME PID CLIENT_ENDPOINT ROLE TERM COMMIT_INDEX
    for i in $(seq 1 $N); do
      pid="$(pid_of "$i")"; role="down"; term="-"; commit="-"
      if alive "$i"; then
        if body="$(http_get "$i" /status)"; then
          role="$(field role "$body")"; term="$(field term "$body")"; commit="$(field commit "$body")"
        else
          role="unreachable"
        fi
      fi
      printf '%-5s %-8s %-16s %-13s %-6s %s\n' "n$i" "${pid:--}" "127.0.0.1:$(client_port "$i")" "$role" "$term" "$commit"
    done
    ;;
  kill)
    member_arg "${1:-}"; alive "$1" || die "n$1 is not running"
    kill -KILL "$(pid_of "$1")"; rm -f "$(pid_file "$1")"; echo "n$1 killed (kill -9)"
    ;;
  pause)
    member_arg "${1:-}"; alive "$1" || die "n$1 is not running"
    kill -STOP "$(pid_of "$1")"; echo "n$1 paused (SIGSTOP); resume with: scripts/cluster.sh resume $1"
    ;;
  resume)
    member_arg "${1:-}"; alive "$1" || die "n$1 is not running"
    kill -CONT "$(pid_of "$1")"; echo "n$1 resumed"
    ;;
  restart)
    member_arg "${1:-}"; stop_member "$1"; start_member "$1"; await_healthy "$1"; echo "n$1 is healthy"
    ;;
  *)
    die "usage: scripts/cluster.sh start|stop|status|kill N|pause N|resume N|restart N"
    ;;
esac
