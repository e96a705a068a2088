#!/usr/bin/env bash
# netns.sh — three Rota members on three "hosts" of this machine: each member runs in its own Linux network
# namespace with its own IP on a bridge, so members talk over real, distinct addresses (opt-in; needs root).
#
#   scripts/netns.sh check                can this machine do it? exit 0, or 3 with the reason (no root, no ip
#                                         netns, no veth/bridge); "check PROFILE" also checks tc netem
#   scripts/netns.sh up [PROFILE]         make the bridge and the namespaces n1..n3, apply PROFILE (default none)
#   scripts/netns.sh start [PROFILE]      up (if needed), start the members, wait until a leader exists
#   scripts/netns.sh status               NAME PID ADDRESS ROLE TERM COMMIT_INDEX
#   scripts/netns.sh kill NAME            kill -9 a member (NAME: n1, n2, n3)
#   scripts/netns.sh restart NAME         start a stopped or killed member again, wait for /health
#   scripts/netns.sh profile PROFILE      the network between members: none, lan, az (tc netem, see below)
#   scripts/netns.sh partition NAME       cut NAME off (its link down): no peer and no client reaches it
#   scripts/netns.sh partition NAME PEER  cut the link between two members only, both ways (blackhole routes);
#                                         each still reaches the third member and the clients
#   scripts/netns.sh heal [NAME]          undo the partitions of NAME (every partition without NAME)
#   scripts/netns.sh endpoints            the client endpoints, for ROTA_ENDPOINTS
#   scripts/netns.sh stop                 SIGTERM every member by PID, wait for each to exit
#   scripts/netns.sh down                 stop, then delete the namespaces, the bridge and their files
#   scripts/netns.sh session CMD ARGS...  start, run CMD with ROTA_ENDPOINTS and ROTA_NETNS_PIDS set, and tear
#                                         everything down when CMD ends or the script is interrupted
#   scripts/netns.sh bench [PROFILE]      fresh members, the side-by-side bench's Rota driver (writes at 1/64/256
#                                         in flight, then the failover gap: kill -9 of the leader), a Markdown
#                                         row per workload, torn down at the end (docs/performance.md);
#                                         ROTA_NETNS_FAILOVER=partition cuts the leader's link instead of killing
#                                         it: a host that vanishes sends no connection reset
#
# Profiles (tc netem on each member's interface; a round trip crosses two of them, so the delay per interface
# is half the round-trip time):
#   none  no emulation: the veth pairs and the bridge only (round trip ~0.05 ms)
#   lan   one datacentre LAN: 0.2 ms round trip
#   az    three availability zones of one region: 2 ms ± 0.5 ms round trip and 0.01% loss per interface (rare
#         lost segments, so TCP's retransmission is exercised without turning the run into a loss test)
# netem needs the kernel's sch_netem module; "check lan" says whether this kernel has it.
#
# Addresses: member i is $ROTA_NETNS_SUBNET.i (default 10.77.0.1..3) on every port as a host would be: client
# 7001, peer 7101, HTTP 7201 (ROTA_BASE_PORT=8000 moves them to 8001, 8101, 8201). This machine is
# $ROTA_NETNS_SUBNET.254 on the bridge, so clients here (rotactl, scripts/bench.sh write) reach the members.
# Each member binds 0.0.0.0 and advertises its name (n1.rota.test ...; the namespace's own /etc/hosts, made
# under /etc/netns/) to its peers and its IP to clients: the --listen-*/--advertise-* split of a real host.
#
# Names: every namespace, link and file carries the prefix $ROTA_NETNS_PREFIX (default: rn + a checksum of
# the state directory), so two runs with different ROTA_NETNS_DIR (and ROTA_NETNS_SUBNET) do not collide.
# State (PIDs, logs, data dirs): $ROTA_NETNS_DIR (default /tmp/rota-netns). ROTA_JAVA_OPTS reaches each JVM.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/kv-server/target/rota-server.jar"
DIR="${ROTA_NETNS_DIR:-/tmp/rota-netns}"
SUBNET="${ROTA_NETNS_SUBNET:-10.77.0}"
BASE="${ROTA_BASE_PORT:-7000}"
PREFIX="${ROTA_NETNS_PREFIX:-rn$(printf '%s' "$DIR" | cksum | cut -c1-5)}"
START_TIMEOUT_S="${ROTA_START_TIMEOUT_S:-60}"
MEMBERS=(1 2 3)
BRIDGE="$PREFIX-br"
HOST_IP="$SUBNET.254"

die() { echo "netns.sh: $*" >&2; exit 1; }
unsupported() { echo "netns.sh: this machine cannot run the namespace topology: $*" >&2; exit 3; }
usage() {
  echo "usage: scripts/netns.sh check|up|start|status|kill NAME|restart NAME|profile none|lan|az|partition NAME [PEER]" \
    "|heal [NAME]|endpoints|stop|down|session CMD...|bench [PROFILE]" >&2
  exit 2
}

[[ "$SUBNET" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "ROTA_NETNS_SUBNET must be the first three octets, e.g. 10.77.0 (got '$SUBNET')"
[[ "$BASE" =~ ^[0-9]+$ ]] && ((BASE > 0 && BASE + 203 < 65536)) || die "ROTA_BASE_PORT must be a port number (got '$BASE')"
# Linux limits interface names to 15 characters: every one here is $PREFIX and a 3-character suffix.
((${#PREFIX} <= 12)) && [[ "$PREFIX" =~ ^[a-z0-9]+$ ]] || die "ROTA_NETNS_PREFIX must be 1-12 lower-case letters or digits (got '$PREFIX')"

ns()          { echo "$PREFIX-n$1"; }
ip_of()       { echo "$SUBNET.$1"; }
name_of()     { echo "n$1.rota.test"; }
client_port() { echo $((BASE + 1)); }
peer_port()   { echo $((BASE + 101)); }
http_port()   { echo $((BASE + 201)); }
pid_file()    { echo "$DIR/n$1.pid"; }
pid_of()      { local f; f="$(pid_file "$1")"; if [[ -f "$f" ]]; then cat "$f"; fi; }

member() {
  local n="${1:-}"; n="${n#n}"
  [[ "$n" =~ ^[1-3]$ ]] || die "no member '${1:-}': name one of n1, n2, n3"
  echo "$n"
}

# A process that has exited but is not reaped yet (its parent, an earlier run of this script, is gone) is a
# zombie: kill -0 still finds it, yet it holds no port and no file.
running() { kill -0 "$1" 2>/dev/null && [[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]]; }

# Running, and still our member: a stale PID file must never make us signal another process.
alive() {
  local pid; pid="$(pid_of "$1")"
  # The PID is setsid, then 'ip netns exec', then scripts/rota, then (all exec) java -jar rota-server.jar.
  [[ -n "$pid" ]] && running "$pid" && grep -qE 'rota-server\.jar|scripts/rota' "/proc/$pid/cmdline" 2>/dev/null
}

is_up() { ip netns list 2>/dev/null | grep -q "^$(ns 1)\b"; }

# Every requirement, tried for real on throwaway objects: being root is not enough in a container.
check() {
  local profile="${1:-none}" probe="$PREFIX-probe"
  ((EUID == 0)) || unsupported "it needs root (ip netns add, veth pairs, a bridge); run it as root"
  command -v ip >/dev/null || unsupported "the ip command (iproute2) is missing: apt-get install iproute2"
  command -v curl >/dev/null || unsupported "curl is needed to poll /status: apt-get install curl"
  ip netns add "$probe" 2>/dev/null || unsupported "'ip netns add' is refused here (a container without CAP_SYS_ADMIN?)"
  local ok=1 why=""
  if ! ip link add "$PREFIX-pa" type veth peer name "$PREFIX-pb" 2>/dev/null; then ok=0; why="veth pairs are refused"
  elif ! ip link set "$PREFIX-pb" netns "$probe" 2>/dev/null; then ok=0; why="a veth end cannot move into a namespace"
  elif ! ip link add "$PREFIX-pr" type bridge 2>/dev/null; then ok=0; why="bridges are refused"
  elif [[ "$profile" != none ]] && ! command -v tc >/dev/null; then ok=0; why="tc is missing (apt-get install iproute2)"
  elif [[ "$profile" != none ]] && ! ip netns exec "$probe" tc qdisc add dev "$PREFIX-pb" root netem delay 1ms 2>/dev/null; then
    ok=0; why="tc netem is refused: this kernel has no sch_netem (modprobe sch_netem, or a kernel with CONFIG_NET_SCH_NETEM); profile none works without it"
  fi
  ip link del "$PREFIX-pr" 2>/dev/null || true
  ip link del "$PREFIX-pa" 2>/dev/null || true
  ip netns del "$probe" 2>/dev/null || true
  ((ok)) || unsupported "$why"
  echo "netns.sh: this machine can run three members in network namespaces${profile:+ (profile $profile)}"
}

# Undo everything of this prefix: members by PID, namespaces (their veth ends go with them), bridge, files.
teardown() {
  local i
  for i in "${MEMBERS[@]}"; do stop_member "$i"; done
  for i in "${MEMBERS[@]}"; do
    ip netns del "$(ns "$i")" 2>/dev/null || true
    ip link del "$PREFIX-h$i" 2>/dev/null || true
    rm -rf "/etc/netns/$(ns "$i")"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
}

up() {
  local profile="${1:-none}" i j hosts
  if is_up; then echo "netns.sh: namespaces $PREFIX-n1..n3 are up already"; apply_profile "$profile"; return; fi
  check "$profile" >/dev/null
  mkdir -p "$DIR"
  trap 'echo "netns.sh: up failed; removing what it made" >&2; teardown' ERR
  ip link add "$BRIDGE" type bridge
  ip addr add "$HOST_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  hosts=""
  for j in "${MEMBERS[@]}"; do hosts+="$(ip_of "$j") $(name_of "$j")"$'\n'; done
  for i in "${MEMBERS[@]}"; do
    ip netns add "$(ns "$i")"
    # The host end stays on the bridge; the member end becomes eth0 inside its namespace.
    ip link add "$PREFIX-h$i" type veth peer name "$PREFIX-m$i"
    ip link set "$PREFIX-h$i" master "$BRIDGE" up
    ip link set "$PREFIX-m$i" netns "$(ns "$i")"
    ip -n "$(ns "$i")" link set "$PREFIX-m$i" name eth0
    ip -n "$(ns "$i")" addr add "$(ip_of "$i")/24" dev eth0
    ip -n "$(ns "$i")" link set eth0 up
    ip -n "$(ns "$i")" link set lo up
    # 'ip netns exec' mounts /etc/netns/NS/hosts over /etc/hosts: the members know each other by name.
    mkdir -p "/etc/netns/$(ns "$i")"
    printf '127.0.0.1 localhost\n%s' "$hosts" >"/etc/netns/$(ns "$i")/hosts"
  done
  trap - ERR
  apply_profile "$profile"
  echo "netns.sh: up: bridge $BRIDGE ($HOST_IP), members n1..n3 at $(ip_of 1)..$(ip_of 3) in namespaces $(ns 1)..$(ns 3)"
}

apply_profile() {
  local profile="$1" i args=()
  case "$profile" in
    none) ;;
    lan) args=(delay 0.1ms) ;;
    az) args=(delay 1ms 0.25ms distribution normal loss 0.01%) ;;
    *) die "no profile '$profile': none, lan or az" ;;
  esac
  for i in "${MEMBERS[@]}"; do
    ip netns exec "$(ns "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
    if ((${#args[@]})); then
      ip netns exec "$(ns "$i")" tc qdisc add dev eth0 root netem "${args[@]}" 2>/dev/null \
        || unsupported "tc netem is refused: this kernel has no sch_netem (modprobe sch_netem); profile none works without it"
    fi
  done
  echo "$profile" >"$DIR/profile"
  local how=""
  if ((${#args[@]})); then how=" (netem ${args[*]} on eth0 of every member)"; fi
  echo "netns.sh: profile $profile$how"
}

initial_cluster() {
  local out="" i
  for i in "${MEMBERS[@]}"; do out+="${out:+,}n$i=$(name_of "$i"):$(peer_port "$i")"; done
  echo "$out"
}

endpoints() {
  local out="" i
  for i in "${MEMBERS[@]}"; do out+="${out:+,}$(ip_of "$i"):$(client_port "$i")"; done
  echo "$out"
}

pids() {
  local out="" i
  for i in "${MEMBERS[@]}"; do alive "$i" && out+="${out:+,}$(pid_of "$i")"; done
  echo "$out"
}

start_member() {
  local i="$1"
  if alive "$i"; then echo "n$i already running (pid $(pid_of "$i"))"; return; fi
  [[ -f "$JAR" ]] || die "$JAR is missing: ./mvnw -B -DskipTests package -pl kv-server/server -am"
  mkdir -p "$DIR"
  # Bind every interface, advertise the name to peers and the IP to clients (clients here cannot resolve
  # the names: they live in the namespaces' own /etc/hosts).
  # setsid: a session of its own, as cluster.sh starts members (design.md B8); it execs in place, so $! stays.
  setsid ip netns exec "$(ns "$i")" "$ROOT/scripts/rota" server --name "n$i" --data-dir "$DIR/n$i" \
    --listen-peer "0.0.0.0:$(peer_port "$i")" --advertise-peer "$(name_of "$i"):$(peer_port "$i")" \
    --listen-client "0.0.0.0:$(client_port "$i")" --advertise-client "$(ip_of "$i"):$(client_port "$i")" \
    --http "0.0.0.0:$(http_port "$i")" --initial-cluster "$(initial_cluster)" --cluster-id "$PREFIX" \
    >>"$DIR/n$i.log" 2>&1 &
  echo $! >"$(pid_file "$i")"
  disown "$!"   # its kill -9 (kill, bench's failover) is the point, not news for this shell's job table
  echo "n$i started (pid $!, namespace $(ns "$i"), client $(ip_of "$i"):$(client_port "$i"), log $DIR/n$i.log)"
}

stop_member() {
  local i="$1" pid deadline killed
  if ! alive "$i"; then rm -f "$(pid_file "$i")"; return; fi
  pid="$(pid_of "$i")"
  kill -TERM "$pid"
  deadline=$((SECONDS + 20)) killed=0
  while running "$pid"; do
    if ((SECONDS >= deadline && !killed)); then echo "n$i did not stop in 20s; kill -9 $pid"; kill -KILL "$pid"; killed=1; fi
    sleep 0.1
  done
  rm -f "$(pid_file "$i")"
  echo "n$i stopped"
}

http_get() { curl -sf --max-time 1 "http://$(ip_of "$1"):$(http_port "$1")$2"; }
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2" | head -n 1; }

probe() {
  local body
  ROLE=DOWN; TERM_="-"; COMMIT="-"
  alive "$1" || return 0
  body="$(http_get "$1" /status)" || return 0
  TERM_="$(field term "$body")"; COMMIT="$(field commit "$body")"
  ROLE="$(field role "$body" | tr a-z A-Z)"
  if [[ "$ROLE" == PRE_CANDIDATE ]]; then ROLE=CANDIDATE; fi
}

leader_exists() {
  local i
  for i in "${MEMBERS[@]}"; do probe "$i"; [[ "$ROLE" == LEADER ]] && return 0; done
  return 1
}

await() {
  local what="$1" deadline=$((SECONDS + START_TIMEOUT_S)) i; shift
  until "$@"; do
    for i in "${MEMBERS[@]}"; do
      [[ -f "$(pid_file "$i")" ]] && ! alive "$i" && die "n$i exited; see $DIR/n$i.log"
    done
    ((SECONDS < deadline)) || die "$what after ${START_TIMEOUT_S}s; see $DIR/n*.log"
    sleep 0.2
  done
}

start() {
  up "${1:-$(cat "$DIR/profile" 2>/dev/null || echo none)}"
  for i in "${MEMBERS[@]}"; do start_member "$i"; done
  await "no leader" leader_exists
  echo
  echo "A leader is elected. Next:"
  echo "  export ROTA_ENDPOINTS=$(endpoints)"
  echo "  scripts/netns.sh status                 # who leads"
  echo "  scripts/netns.sh partition n1           # cut n1 off; heal n1 ends it"
  echo "  scripts/bench.sh write $(endpoints) $(pids) 64 10"
  echo "  scripts/netns.sh down                   # stop the members, remove the namespaces"
}

# Both ways: a route in each namespace that drops the other's packets, as a cut cable does (no answer, no reset).
cut_link() {
  ip -n "$(ns "$1")" route replace blackhole "$(ip_of "$2")/32"
  ip -n "$(ns "$2")" route replace blackhole "$(ip_of "$1")/32"
}

heal_member() {
  local i="$1" j
  ip -n "$(ns "$i")" link set eth0 up
  for j in "${MEMBERS[@]}"; do
    ip -n "$(ns "$i")" route del blackhole "$(ip_of "$j")/32" 2>/dev/null || true
    ip -n "$(ns "$j")" route del blackhole "$(ip_of "$i")/32" 2>/dev/null || true
  done
}

# Reads the bench driver's marker lines (tools/bench/.../driver/Markers.java): kills the leader when asked, prints
# a table row per result. The driver's own log lines go to $DIR/bench.log.
bench_rows() {
  local profile="$1" line workload ops seconds p50 p99 gap i
  while read -r line; do
    case "$line" in
      @kill-leader)
        for i in "${MEMBERS[@]}"; do
          probe "$i"
          [[ "$ROLE" == LEADER ]] || continue
          if [[ "${ROTA_NETNS_FAILOVER:-kill}" == partition ]]; then
            ip -n "$(ns "$i")" link set eth0 down; echo "n$i (leader) cut off" >>"$DIR/bench.log"
          else
            kill -KILL "$(pid_of "$i")"; rm -f "$(pid_file "$i")"; echo "n$i (leader) killed" >>"$DIR/bench.log"
          fi
        done ;;
      @result*)
        workload="$(sed -n 's/.* workload=\([^ ]*\).*/\1/p' <<<"$line")"
        ops="$(sed -n 's/.* ops=\([0-9]*\).*/\1/p' <<<"$line")"
        seconds="$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")"
        p50="$(sed -n 's/.* p50=\([0-9]*\).*/\1/p' <<<"$line")"
        p99="$(sed -n 's/.* p99=\([0-9]*\).*/\1/p' <<<"$line")"
        gap="$(sed -n 's/.* gap_ms=\([0-9]*\).*/\1/p' <<<"$line")"
        if [[ -n "$gap" ]]; then
          printf '| %s | failover (%s) | | | | %s ms |\n' "$profile" \
            "$([[ "${ROTA_NETNS_FAILOVER:-kill}" == partition ]] && echo "the leader's link down" || echo "kill -9 of the leader")" "$gap"
        else
          awk -v p="$profile" -v w="$workload" -v o="$ops" -v s="$seconds" -v a="$p50" -v b="$p99" \
            'BEGIN { printf "| %s | %s | %.0f | %.2f ms | %.2f ms | |\n", p, w, o / s, a / 1000, b / 1000 }'
        fi ;;
      *) echo "$line" >>"$DIR/bench.log" ;;
    esac
  done
}

cmd="${1:-}"; shift || true
case "$cmd" in
  check) check "${1:-none}" ;;
  up) up "${1:-none}" ;;
  start) start "${1:-}" ;;
  status)
    is_up || die "the namespaces are not up: scripts/netns.sh start"
    printf '%-5s %-8s %-16s %-10s %-5s %s\n' NAME PID ADDRESS ROLE TERM COMMIT_INDEX
    for i in "${MEMBERS[@]}"; do
      probe "$i"; pid="-"; if alive "$i"; then pid="$(pid_of "$i")"; fi
      printf '%-5s %-8s %-16s %-10s %-5s %s\n' "n$i" "$pid" "$(ip_of "$i"):$(client_port "$i")" "$ROLE" "$TERM_" "$COMMIT"
    done
    ;;
  kill)
    i="$(member "${1:-}")"; alive "$i" || die "n$i is not running"
    kill -KILL "$(pid_of "$i")"; rm -f "$(pid_file "$i")"; echo "n$i killed (kill -9)"
    ;;
  restart)
    i="$(member "${1:-}")"; stop_member "$i"; start_member "$i"
    await "n$i not healthy" http_get "$i" /health >/dev/null
    echo "n$i is healthy"
    ;;
  profile) is_up || die "the namespaces are not up: scripts/netns.sh up"; apply_profile "${1:-}" ;;
  partition)
    is_up || die "the namespaces are not up: scripts/netns.sh start"
    i="$(member "${1:-}")"
    if [[ -n "${2:-}" ]]; then
      j="$(member "$2")"; [[ "$i" != "$j" ]] || die "partition NAME PEER: two different members"
      cut_link "$i" "$j"; echo "n$i and n$j cannot reach each other (each still reaches the third); heal n$i ends it"
    else
      ip -n "$(ns "$i")" link set eth0 down; echo "n$i is cut off (link down): no peer, no client; heal n$i ends it"
    fi
    ;;
  heal)
    is_up || die "the namespaces are not up"
    if [[ -n "${1:-}" ]]; then heal_member "$(member "$1")"; echo "n${1#n} healed"
    else for i in "${MEMBERS[@]}"; do heal_member "$i"; done; echo "every partition healed"; fi
    ;;
  endpoints) endpoints ;;
  stop) for i in "${MEMBERS[@]}"; do stop_member "$i"; done ;;
  down) teardown; echo "netns.sh: down (namespaces, bridge $BRIDGE and /etc/netns/$PREFIX-* removed; logs stay in $DIR)" ;;
  session)
    (($#)) || die "session CMD ARGS...: the command to run against the members"
    trap 'teardown >/dev/null 2>&1' EXIT
    trap 'exit 130' INT TERM
    start "${ROTA_NETNS_PROFILE:-none}"
    ROTA_ENDPOINTS="$(endpoints)" ROTA_NETNS_PIDS="$(pids)" "$@"
    ;;
  bench)
    profile="${1:-none}"
    bench_jar="$ROOT/tools/bench/target/rota-bench.jar"
    [[ -f "$bench_jar" ]] || die "$bench_jar is missing: ./mvnw -B -DskipTests package -pl kv-server/server,tools/bench -am"
    ! is_up || die "the namespaces are up: scripts/netns.sh down first (bench starts fresh members)"
    trap 'teardown >/dev/null 2>&1' EXIT
    trap 'exit 130' INT TERM
    mkdir -p "$DIR"; rm -rf "${DIR:?}"/n[123]
    start "$profile" >"$DIR/bench.log"
    echo "| profile | workload | writes/s | p50 | p99 | failover gap |"
    echo "|---|---|---|---|---|---|"
    java -cp "$bench_jar" io.rota.bench.driver.DriverMain rota "$(endpoints)" "${ROTA_NETNS_WARMUP_MS:-3000}" \
      "${ROTA_NETNS_MEASURE_MS:-5000}" write-1,write-64,write-256,failover 2000 5000 2>>"$DIR/bench.log" \
      | bench_rows "$profile"
    ;;
  *) usage ;;
esac
