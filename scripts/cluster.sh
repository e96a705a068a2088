#!/usr/bin/env bash
# cluster.sh — a local three-member Rota cluster on 127.0.0.1: members n1, n2, n3 (ROTA_MEMBERS=5: n1..n5).
#
#   scripts/cluster.sh start            start n1..n3 (those not running), wait until a leader exists
#   scripts/cluster.sh start --tls      the same over TLS: a throwaway CA and certificates in $DIR/tls (openssl),
#                                       client certificates required, mutual TLS between members (docs/security.md)
#   scripts/cluster.sh stop             SIGTERM every member, wait for each to exit
#   scripts/cluster.sh status           NAME PID CLIENT_ENDPOINT ROLE TERM COMMIT_INDEX
#   scripts/cluster.sh kill NAME        kill -9 a member (NAME: n1, n2, n3; 1, 2, 3 also work)
#   scripts/cluster.sh pause NAME       SIGSTOP (a frozen process: sockets open, no answers)
#   scripts/cluster.sh resume NAME      SIGCONT
#   scripts/cluster.sh restart NAME     stop it (SIGTERM, or it is already dead), start it, wait for /health
#   scripts/cluster.sh partition NAME   LAB MODE: cut the member's Raft peer traffic (both ways); heal NAME ends it
#   scripts/cluster.sh add NAME         add a member (n4, n5, ... on the next ports): rotactl member add --learner
#                                       --promote-when-caught-up, start it meanwhile with --initial-cluster-state
#                                       existing; rotactl promotes it once caught up
#   scripts/cluster.sh remove NAME      rotactl member remove, stop it, delete its data dir (its id is retired)
#
# The dashboard: http://127.0.0.1:7201/ (any member's HTTP port). ROTA_LAB=1 at start turns on lab mode: the
# dashboard gets buttons that run this script's kill/pause/resume/restart and partition members — for a
# local cluster only, never in production (docs/dashboard.md).
#
# ROLE is LEADER, FOLLOWER, CANDIDATE (pre-vote included), PAUSED (SIGSTOPped), NEEDS-ROOT (auth is on: set
# ROTA_HTTP_USER, below) or DOWN (no process, or /status does not answer). Ports: client 7001-7003, peer 7101-7103, HTTP 7201-7203, etcd API 7301-7303 (to
# 7005, 7105, 7205, 7305 with five members); ROTA_BASE_PORT=8000
# moves them to 8001.., 8101.., 8201.., 8301... Data, logs (n1.log..) and PID files: ./data at the repository
# root, or $ROTA_CLUSTER_DIR. ROTA_JAVA_OPTS is passed to each member's JVM (e.g. -Xmx512m); with --tls,
# ROTA_TLS_PROVIDER=jdk|openssl becomes each member's --tls-provider. Once auth is enabled, /status answers
# root only (docs/security.md, "The HTTP port"): set ROTA_HTTP_USER=root:PASSWORD for the status polls here
# (with --tls, the client certificate's CN root does it while a user root exists).
#
# The cluster remembers its ports: start writes $ROTA_CLUSTER_DIR/cluster.env (ROTA_BASE_PORT, ROTA_MEMBERS,
# ROTA_ENDPOINTS), and every later command here, scripts/rotactl and rotactl read it when ROTA_BASE_PORT (or
# ROTA_ENDPOINTS) is not set, so another shell finds a moved cluster without the variable. A cluster started
# with --tls records ROTA_TLS=1 and ROTA_CACERT, ROTA_CERT, ROTA_KEY there too: restart and add keep TLS.
set -euo pipefail
shopt -s inherit_errexit   # a die() inside $(...) must end the script too

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/kv-server/target/rota-server.jar"
DIR="${ROTA_CLUSTER_DIR:-$ROOT/data}"
STATE="$DIR/cluster.env"
# One KEY=value of the state file (parsed, never sourced).
state_get() { if [[ -f "$STATE" ]]; then sed -n "s/^$1=\([0-9A-Za-z.:,]*\)\$/\1/p" "$STATE" | head -n 1; fi; }
STATE_BASE="$(state_get ROTA_BASE_PORT)"
if [[ -n "${ROTA_BASE_PORT:-}" ]]; then BASE="$ROTA_BASE_PORT"; BASE_FROM="ROTA_BASE_PORT"
elif [[ -n "$STATE_BASE" ]]; then BASE="$STATE_BASE"; BASE_FROM="$STATE"
else BASE=7000; BASE_FROM="the default"; fi
SIZE="${ROTA_MEMBERS:-$(state_get ROTA_MEMBERS)}"; SIZE="${SIZE:-3}"
TLS_DIR="$DIR/tls"
TLS="$(state_get ROTA_TLS)"; TLS="${TLS:-0}"
START_TIMEOUT_S="${ROTA_START_TIMEOUT_S:-60}"

die() { echo "cluster.sh: $*" >&2; exit 1; }
usage() { echo "usage: scripts/cluster.sh start|stop|status|kill NAME|pause NAME|resume NAME|restart NAME" \
  "|partition NAME|heal NAME|add NAME|remove NAME (NAME: n1 .. n$SIZE)" >&2; exit 2; }

[[ "$SIZE" == 3 || "$SIZE" == 5 ]] || die "ROTA_MEMBERS must be 3 or 5 (got '$SIZE')"
[[ "$BASE" =~ ^[0-9]+$ ]] && ((BASE > 0 && BASE + 300 + SIZE < 65536)) || die "ROTA_BASE_PORT must be a port number (got '$BASE')"
# Membership changes (add, remove) are remembered in $DIR: "added" holds "POSITION ID" per added member (its id
# is the cluster's, assigned by member add), nP.join the --initial-cluster it joined with (and nP.cluster-id the
# --cluster-id member add printed for it), "removed" the positions removed for good. "token" is this cluster's
# --initial-cluster-token, random, made once: the cluster id derives from it, so two clusters started in turn on
# the same ports never admit each other's members (design.md MF9). The members are the first $SIZE positions and the added ones, less the removed.
ADDED="$DIR/added"; REMOVED="$DIR/removed"
members_now() {
  local i
  for i in $(seq 1 "$SIZE") $( [[ -f "$ADDED" ]] && cut -d' ' -f1 "$ADDED"); do
    [[ -f "$REMOVED" ]] && grep -qx "$i" "$REMOVED" && continue
    echo "$i"
  done
}
MEMBERS=($(members_now))

# n2 or 2 -> 2 (the member's position: its ports, and its id unless it was added)
member() {
  local n="${1:-}" i
  [[ -n "$n" ]] || die "name a member: $(names)"
  n="${n#n}"
  for i in "${MEMBERS[@]}"; do [[ "$i" == "$n" ]] && { echo "$n"; return; }; done
  die "no member '${1:-}': name one of $(names)"
}
# Written at start, add and remove: how the members of this data dir are reached.
write_state() {
  mkdir -p "$DIR"
  printf '# scripts/cluster.sh: the cluster of this directory (read by cluster.sh, scripts/rotactl, rotactl)\n%s\n%s\n%s\n' \
    "ROTA_BASE_PORT=$BASE" "ROTA_MEMBERS=$SIZE" "ROTA_ENDPOINTS=$(endpoints)" >"$STATE.tmp"
  if ((TLS)); then
    printf '%s\n' "ROTA_TLS=1" "ROTA_CACERT=$TLS_DIR/ca.pem" "ROTA_CERT=$TLS_DIR/client.pem" \
      "ROTA_KEY=$TLS_DIR/client.key" >>"$STATE.tmp"
  fi
  mv "$STATE.tmp" "$STATE"
}

# TLS (start --tls): a throwaway CA and certificates made with Debian's openssl — keytool cannot write the PEM
# private keys the members and rotactl read. EC P-256 keys, valid 30 days; CA key beside them: for a laptop only.
tls_make() { # FILE CN SAN: a certificate of the CA, for servers and clients both, unless it exists
  local f="$1" cn="$2" san="$3"
  [[ -f "$TLS_DIR/$f.pem" ]] && return
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n%s\n' \
    "${san:+subjectAltName=$san}" >"$TLS_DIR/$f.ext"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$TLS_DIR/$f.key" \
    -out "$TLS_DIR/$f.csr" -subj "/CN=$cn" 2>/dev/null
  openssl x509 -req -in "$TLS_DIR/$f.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" -CAcreateserial \
    -days 30 -extfile "$TLS_DIR/$f.ext" -out "$TLS_DIR/$f.pem" 2>/dev/null
  rm -f "$TLS_DIR/$f.csr" "$TLS_DIR/$f.ext"
  chmod 600 "$TLS_DIR/$f.key"
}
# Two client certificates (issue 33): client.pem (CN client) for everyday use — with auth enabled it is the user
# 'client' if that user exists, else nobody, so it never makes an application root — and root.pem (CN root) for
# administration (user, role, member and auth commands), which this script's own calls use.
tls_setup() { # the CA, a certificate per member (CN and DNS SAN: its name) and the two client certificates
  command -v openssl >/dev/null || die "--tls needs openssl to make certificates (Debian: apt-get install openssl)"
  mkdir -p "$TLS_DIR"; chmod 700 "$TLS_DIR"
  if [[ ! -f "$TLS_DIR/ca.pem" ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$TLS_DIR/ca.key" \
      -out "$TLS_DIR/ca.pem" -days 30 -subj "/CN=rota-local-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null || die "openssl could not make the CA"
    chmod 600 "$TLS_DIR/ca.key"
  fi
  # A client.pem of an older cluster.sh named root: replaced, so the everyday certificate is never root's.
  if [[ -f "$TLS_DIR/client.pem" ]] && openssl x509 -noout -subject -in "$TLS_DIR/client.pem" 2>/dev/null \
      | grep -Eq 'CN ?= ?root$'; then
    rm -f "$TLS_DIR/client.pem" "$TLS_DIR/client.key"
  fi
  tls_make client client ""
  tls_make root root ""
}
tls_flags() { # the TLS flags of member $1, after making its certificate
  local i="$1"
  ((TLS)) || return 0
  tls_make "n$i" "n$i" "DNS:n$i,DNS:localhost,IP:127.0.0.1"
  echo --cert-file "$TLS_DIR/n$i.pem" --key-file "$TLS_DIR/n$i.key" --trusted-ca-file "$TLS_DIR/ca.pem" \
    --client-cert-auth --peer-cert-file "$TLS_DIR/n$i.pem" --peer-key-file "$TLS_DIR/n$i.key" \
    --peer-trusted-ca-file "$TLS_DIR/ca.pem"
  # ROTA_TLS_PROVIDER=openssl: BoringSSL instead of the JDK's TLS (scripts/bench.sh tls compares them).
  if [[ -n "${ROTA_TLS_PROVIDER:-}" ]]; then echo --tls-provider "$ROTA_TLS_PROVIDER"; fi
}

# A cluster of this directory that runs on other ports than ROTA_BASE_PORT says: refuse, never probe wrong ports.
check_base() {
  local i
  [[ -n "$STATE_BASE" && "$STATE_BASE" != "$BASE" ]] || return 0
  for i in "${MEMBERS[@]}"; do
    alive "$i" && die "the cluster in $DIR runs on base port $STATE_BASE (client ports $((STATE_BASE + 1))..), not" \
      "ROTA_BASE_PORT=$BASE: unset ROTA_BASE_PORT to use it, or stop it first, or set ROTA_CLUSTER_DIR for a second one"
  done
  return 0
}

# Said when a member does not answer: where the ports came from.
ports_from() { echo "(ports: base $BASE from $BASE_FROM; data dir $DIR)"; }

names() { local out="" i; for i in "${MEMBERS[@]}"; do out+="${out:+, }n$i"; done; echo "$out"; }

# The member id at position $1: the position for the first members, the cluster's for added ones.
member_id() {
  local id=""
  [[ -f "$ADDED" ]] && id="$(awk -v p="$1" '$1 == p { print $2 }' "$ADDED")"
  echo "${id:-$1}"
}

client_port() { echo $((BASE + $1)); }
peer_port()   { echo $((BASE + 100 + $1)); }
http_port()   { echo $((BASE + 200 + $1)); }
# etcd's v3 API (--listen-etcd): etcdctl and etcd clients talk to the same cluster there (docs/etcd-compat.md).
etcd_port()   { echo $((BASE + 300 + $1)); }
pid_file()    { echo "$DIR/n$1.pid"; }

pid_of() {
  local f; f="$(pid_file "$1")"
  if [[ -f "$f" ]]; then cat "$f"; fi
}

# Running, and still our member: a stale PID file must never make us signal some other process.
alive() {
  local pid; pid="$(pid_of "$1")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q rota-server.jar "/proc/$pid/cmdline" 2>/dev/null
}

paused() {
  [[ "$(ps -o stat= -p "$(pid_of "$1")" 2>/dev/null)" == T* ]]
}

cluster_token() {
  [[ -f "$DIR/token" ]] || od -An -tx1 -N8 /dev/urandom | tr -d ' \n' >"$DIR/token"
  cat "$DIR/token"
}

initial_cluster() {
  local out="" i
  for i in $(seq 1 "$SIZE"); do out+="${out:+,}n$i=127.0.0.1:$(peer_port "$i")"; done
  echo "$out"
}

endpoints() {
  local out="" i
  for i in "${MEMBERS[@]}"; do out+="${out:+,}127.0.0.1:$(client_port "$i")"; done
  echo "$out"
}

etcd_endpoints() { # host:port, or https://host:port with --tls (etcd clients then take TLS from the URL)
  local out="" i scheme=""
  ((TLS)) && scheme="https://"
  for i in "${MEMBERS[@]}"; do out+="${out:+,}${scheme}127.0.0.1:$(etcd_port "$i")"; done
  echo "$out"
}

# The HTTP port speaks HTTPS on a TLS cluster (the member's client certificate; pages other than /health and
# /metrics need a client certificate): curl's scheme and files for it.
http_url() { if ((TLS)); then echo "https://127.0.0.1:$(http_port "$1")$2"; else echo "http://127.0.0.1:$(http_port "$1")$2"; fi; }
http_tls() { if ((TLS)); then echo --cacert "$TLS_DIR/ca.pem" --cert "$TLS_DIR/root.pem" --key "$TLS_DIR/root.key"; fi; }

# The body of a 200 answer; fails on anything else (no answer in 1 s included).
http_get() {
  local login=()
  if [[ -n "${ROTA_HTTP_USER:-}" ]]; then login=(-u "$ROTA_HTTP_USER"); fi
  curl -sf --max-time 1 $(http_tls) "${login[@]}" "$(http_url "$1" "$2")"
}

field() { # one field of a one-line JSON object (/status, rotactl -w json): "NAME":"TEXT" or "NAME":VALUE
  sed -n -e "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" -e t -e "s/.*\"$1\":\([^\",}]*\).*/\1/p" <<<"$2" | head -n 1
}

human() { # rotactl's -w json notes and errors on stderr, as the text of their "message" (always the last field)
  local line
  while IFS= read -r line; do
    if [[ "$line" == *'"message":"'*'"}' ]]; then
      line="${line##*\"message\":\"}"; line="${line%\"\}}"; line="${line//\\\"/\"}"; line="${line//\\\\/\\}"
    fi
    printf '%s\n' "$line"
  done
}

# Sets ROLE (LEADER, FOLLOWER, CANDIDATE, PAUSED, DOWN or NEEDS-ROOT: auth is on and ROTA_HTTP_USER is not root),
# TERM_ and COMMIT ("-" unless it answers).
probe() {
  local body
  ROLE=DOWN; TERM_="-"; COMMIT="-"
  alive "$1" || return 0
  if paused "$1"; then ROLE=PAUSED; return 0; fi
  if ! body="$(http_get "$1" /status)"; then
    # Up, but /status answers root only (auth enabled): say so rather than DOWN.
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 $(http_tls) "$(http_url "$1" /status)")" == 403 ]]; then
      ROLE=NEEDS-ROOT
    fi
    return 0
  fi
  TERM_="$(field term "$body")"; COMMIT="$(field commit "$body")"
  ROLE="$(field role "$body" | tr a-z A-Z)"
  if [[ "$ROLE" == PRE_CANDIDATE ]]; then ROLE=CANDIDATE; fi
}

build_jar() {
  [[ -f "$JAR" ]] && return
  echo "building $JAR (first run; about a minute) ..."
  (cd "$ROOT" && ./mvnw -B -DskipTests package) | grep --line-buffered -E '^\[INFO\] (Building |BUILD)' \
    || die "the build failed; run ./mvnw -B -DskipTests package to see why"
  [[ -f "$JAR" ]] || die "the build did not produce $JAR"
}

start_member() {
  local i="$1"
  local lab=()
  if alive "$i"; then echo "n$i already running (pid $(pid_of "$i"))"; return; fi
  mkdir -p "$DIR"
  # Lab mode: the member's dashboard may run this script (with this environment) on a button press.
  if [[ "${ROTA_LAB:-}" == 1 ]]; then lab=(--lab-script "$ROOT/scripts/cluster.sh" --lab-cluster-dir "$DIR"); fi
  # An added member joins: the cluster's members as member add printed them, and existing state.
  local cluster=(--initial-cluster "$(initial_cluster)" --initial-cluster-token "$(cluster_token)")
  if [[ -f "$DIR/n$i.join" ]]; then
    cluster=(--initial-cluster "$(cat "$DIR/n$i.join")" --initial-cluster-state existing)
    if [[ -f "$DIR/n$i.cluster-id" ]]; then cluster+=(--cluster-id "$(cat "$DIR/n$i.cluster-id")"); fi
  fi
  local tls; tls=($(tls_flags "$i"))
  # etcd's front door: with --tls it serves TLS with the client port's certificates (client certificates required).
  local etcd=(--listen-etcd "127.0.0.1:$(etcd_port "$i")")
  # A session of its own, as a service manager would start it and as the peers' scripts start etcd and
  # ZooKeeper: with the kernel's autogroup scheduling (on in most distributions) a member then competes for
  # the cores as a group of its own, not as a few threads of the shell's session beside everything else
  # started from it (design.md B8). setsid execs in place here (a background job leads no process group),
  # so $! stays the member's PID.
  setsid "$ROOT/scripts/rota" server --name "n$i" --data-dir "$DIR/n$i" \
    --listen-client "127.0.0.1:$(client_port "$i")" --listen-peer "127.0.0.1:$(peer_port "$i")" \
    --http "127.0.0.1:$(http_port "$i")" "${etcd[@]}" "${cluster[@]}" "${lab[@]}" "${tls[@]}" \
    >>"$DIR/n$i.log" 2>&1 &
  echo $! >"$(pid_file "$i")"
  echo "n$i started (pid $!, client 127.0.0.1:$(client_port "$i"), log $DIR/n$i.log)"
}

# Polls until fn succeeds; dies naming the members that exited, or after the deadline.
await() {
  local what="$1" deadline=$((SECONDS + START_TIMEOUT_S)) i; shift
  until "$@"; do
    for i in "${MEMBERS[@]}"; do
      [[ -f "$(pid_file "$i")" ]] && ! alive "$i" || continue
      # A member removed with rotactl (not cluster.sh remove) exits 3 once it knows: forget it, do not fail.
      if tail -n 5 "$DIR/n$i.log" 2>/dev/null | grep -q "was removed from the cluster"; then
        echo "cluster.sh: n$i was removed from the cluster (see $DIR/n$i.log); forgetting it" >&2
        echo "$i" >>"$REMOVED"; rm -f "$(pid_file "$i")"; MEMBERS=($(members_now)); write_state
        continue
      fi
      die "n$i exited; see $DIR/n$i.log"
    done
    ((SECONDS < deadline)) || die "$what after ${START_TIMEOUT_S}s; see $DIR/n*.log"
    sleep 0.2
  done
}

leader_exists() {
  local i
  for i in "${MEMBERS[@]}"; do probe "$i"; [[ "$ROLE" == LEADER ]] && return 0; done
  return 1
}

stop_member() {
  local i="$1" pid deadline
  if ! alive "$i"; then rm -f "$(pid_file "$i")"; return; fi
  pid="$(pid_of "$i")"
  kill -TERM "$pid"
  kill -CONT "$pid"   # a paused member must run to handle SIGTERM
  deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then echo "n$i did not stop in 20s; kill -9 $pid"; kill -KILL "$pid"; fi
    sleep 0.1
  done
  rm -f "$(pid_file "$i")"
  echo "n$i stopped"
}

# LAB MODE: POST to a member's lab endpoint (it refuses unless started with ROTA_LAB=1).
lab_post() {
  local i; i="$(member "$1")"
  alive "$i" || die "n$i is not running"
  curl -sS --max-time 5 $(http_tls) -X POST -H 'X-Rota-Lab: yes' "$(http_url "$i" "$2")" \
    || die "n$i's HTTP port did not answer"
}

signal_member() { # NAME SIGNAL: the member must be running
  local i; i="$(member "$1")"
  alive "$i" || die "n$i is not running"
  kill "-$2" "$(pid_of "$i")"
  echo "$i"
}

cmd="${1:-}"; shift || true
check_base
if [[ "$cmd" == start && "${1:-}" == --tls ]]; then TLS=1; shift; fi
[[ "$cmd" != start || -z "${1:-}" ]] || die "start takes no argument but --tls (got '$1')"
if ((TLS)); then
  tls_setup
  # This script's own rotactl calls (add, remove: administration) talk TLS as root; what it prints and records
  # for people is the everyday certificate (ROTA_CERT below).
  export ROTA_CACERT="$TLS_DIR/ca.pem" ROTA_CERT="$TLS_DIR/root.pem" ROTA_KEY="$TLS_DIR/root.key"
fi
case "$cmd" in
  start)
    command -v curl >/dev/null || die "curl is needed to poll /status"
    build_jar
    for i in "${MEMBERS[@]}"; do start_member "$i"; done
    write_state
    await "no leader $(ports_from)" leader_exists
    echo
    echo "ROTA_ENDPOINTS=$(endpoints)"
    if ((TLS)); then
      echo "ROTA_CACERT=$ROTA_CACERT"
      echo "ROTA_CERT=$TLS_DIR/client.pem"
      echo "ROTA_KEY=$TLS_DIR/client.key"
    fi

    echo "ROTA_ETCD_ENDPOINTS=$(etcd_endpoints)"
    echo
    echo "A leader is elected$( ((TLS)) && echo " (TLS on the client ports, client certificates required; mutual TLS between members)"). Next:"
    echo "  open $(http_url 1 /)   # the dashboard$([[ "${ROTA_LAB:-}" == 1 ]] && echo ", in LAB MODE")$( ((TLS)) && echo \
      " (HTTPS: the browser needs $TLS_DIR/root.pem and root.key as a PKCS#12 and the CA trusted)")"
    echo "  export ROTA_ENDPOINTS=$(endpoints)$( ((TLS)) && echo " ROTA_CACERT=$ROTA_CACERT ROTA_CERT=$TLS_DIR/client.pem ROTA_KEY=$TLS_DIR/client.key")"
    if ((TLS)); then
      echo "  # client.pem (CN client) is for everyday use; root.pem (CN root) is for administration:"
      echo "  ROTA_CERT=$TLS_DIR/root.pem ROTA_KEY=$TLS_DIR/root.key scripts/rotactl user add root   # then auth enable (docs/security.md)"
      echo "  ETCDCTL_API=3 etcdctl --endpoints=$(etcd_endpoints) --cacert=$ROTA_CACERT --cert=$TLS_DIR/client.pem --key=$TLS_DIR/client.key put greeting hello   # etcd's own CLI works too"
    else
      echo "  ETCDCTL_API=3 etcdctl --endpoints=$(etcd_endpoints) put greeting hello   # etcd's own CLI works too"
    fi
    echo "  scripts/cluster.sh status          # who leads"
    echo "  scripts/cluster.sh kill n1         # and watch another member take over"
    echo "  scripts/cluster.sh stop"
    ;;
  stop)
    for i in "${MEMBERS[@]}"; do stop_member "$i"; done
    ;;
  status)
    printf '%-5s %-8s %-16s %-10s %-5s %s\n' NAME PID CLIENT_ENDPOINT ROLE TERM COMMIT_INDEX
    down=0
    for i in "${MEMBERS[@]}"; do
      probe "$i"
      pid="-"; if alive "$i"; then pid="$(pid_of "$i")"; fi
      [[ "$ROLE" == DOWN ]] && down=1
      printf '%-5s %-8s %-16s %-10s %-5s %s\n' "n$i" "$pid" "127.0.0.1:$(client_port "$i")" "$ROLE" "$TERM_" "$COMMIT"
    done
    # Every member of the configuration, also those added by hand (rotactl member add): a voter this script
    # does not run still counts toward the quorum (issue 32, item 7).
    if [[ -f "$ROOT/tools/rotactl/target/rotactl.jar" ]]; then
      managed=" "; for i in "${MEMBERS[@]}"; do managed+="$(member_id "$i") "; done
      # rotactl -w json: one object, "members":[{...},{...}]; one member a line, each read with field().
      "$ROOT/scripts/rotactl" --endpoints "$(endpoints)" --command-timeout 3s member list -w json 2>/dev/null \
        | sed -e 's/^.*"members":\[{//' -e 's/}\]}$//' -e 's/},{/\n/g' \
        | while IFS= read -r m; do
            id="$(field id "$m")"; name="$(field name "$m")"; peer="$(field peer_address "$m")"
            client="$(field client_address "$m")"
            [[ -n "$id" ]] || continue
            [[ "$managed" == *" $id "* ]] && continue
            kind=voter; [[ "$(field is_learner "$m")" == true ]] && kind=learner
            printf '%-5s %-8s %-16s %-10s %-5s %s\n' "$name" - "${client:--}" - - \
              "- ($kind, id $id, peer $peer: not managed by cluster.sh)"
          done || true
    fi
    if ((down)); then ports_from >&2; fi
    ;;
  kill)
    i="$(signal_member "${1:-}" KILL)"; rm -f "$(pid_file "$i")"; echo "n$i killed (kill -9)"
    ;;
  pause)
    i="$(signal_member "${1:-}" STOP)"; echo "n$i paused (SIGSTOP); resume with: scripts/cluster.sh resume n$i"
    ;;
  resume)
    i="$(signal_member "${1:-}" CONT)"; echo "n$i resumed"
    ;;
  restart)
    i="$(member "${1:-}")"; build_jar; stop_member "$i"; start_member "$i"
    await "n$i not healthy" http_get "$i" /health >/dev/null
    echo "n$i is healthy"
    ;;
  partition)
    lab_post "${1:-}" "/lab/partition?on=true"
    ;;
  add)
    n="${1:-}"; n="${n#n}"
    [[ "$n" =~ ^[1-9]$ ]] || die "add NAME: name the new member n4 .. n9 (its ports: client $((BASE + 4)), ...)"
    for i in "${MEMBERS[@]}"; do [[ "$i" == "$n" ]] && die "n$n is already a member"; done
    { [[ -f "$REMOVED" ]] && grep -qx "$n" "$REMOVED"; } && die "n$n was removed; ids and names are not reused here: add another name"
    ((n > SIZE)) || die "n$n is one of the first $SIZE members; add n$((SIZE + 1)) or later"
    [[ -f "$ROOT/tools/rotactl/target/rotactl.jar" ]] || die "rotactl is not built: ./mvnw -B -DskipTests package"
    build_jar
    # rotactl adds the learner, prints its record (-w json: one line) and waits until it has caught up to promote
    # it; the member is started here meanwhile, from that record (design HS69).
    added="$DIR/n$n.add.json"; mkdir -p "$DIR"; : >"$added"
    "$ROOT/scripts/rotactl" --endpoints "$(endpoints)" -w json member add "n$n" \
      --peer-urls "127.0.0.1:$(peer_port "$n")" --client-urls "127.0.0.1:$(client_port "$n")" \
      --learner --promote-when-caught-up --catch-up-timeout "${START_TIMEOUT_S}s" >"$added" 2> >(human >&2) &
    rpid=$!
    trap 'kill "$rpid" 2>/dev/null || true' EXIT   # a failed start below: no rotactl left waiting for it
    until [[ -s "$added" ]]; do
      kill -0 "$rpid" 2>/dev/null || { wait "$rpid" || true; die "member add failed (see above)"; }
      sleep 0.1
    done
    record="$(head -n 1 "$added")"
    id="$(field id "$record")"; join="$(field initial_cluster "$record")"; cid="$(field cluster_id "$record")"
    [[ -n "$id" && -n "$join" && -n "$cid" ]] || { kill "$rpid" 2>/dev/null || true; die "could not read member add's answer: $record"; }
    echo "Member n$n added with id $id as a learner (peer 127.0.0.1:$(peer_port "$n"))"
    echo "$n $id" >>"$ADDED"; echo "$join" >"$DIR/n$n.join"; echo "$cid" >"$DIR/n$n.cluster-id"
    MEMBERS+=("$n")
    start_member "$n"
    write_state
    wait "$rpid" || die "n$n did not catch up in ${START_TIMEOUT_S}s (see above and $DIR/n$n.log); it is still a learner: scripts/rotactl member promote $id"
    trap - EXIT; rm -f "$added"
    echo "n$n (id $id) caught up and was promoted to voter."
    echo
    echo "ROTA_ENDPOINTS=$(endpoints)"
    echo "Next:"
    echo "  scripts/rotactl member list --progress     # voters, learners, lag"
    echo "  scripts/cluster.sh remove n$n              # and back"
    ;;
  remove)
    i="$(member "${1:-}")"; id="$(member_id "$i")"
    [[ -f "$ROOT/tools/rotactl/target/rotactl.jar" ]] || die "rotactl is not built: ./mvnw -B -DskipTests package"
    others=""; for j in "${MEMBERS[@]}"; do [[ "$j" != "$i" ]] && others+="${others:+,}127.0.0.1:$(client_port "$j")"; done
    "$ROOT/scripts/rotactl" --endpoints "$others" member remove "$id" >/dev/null || die "member remove $id failed (see above)"
    echo "n$i (id $id) removed from the cluster"
    stop_member "$i"
    rm -rf "${DIR:?}/n$i" "$DIR/n$i.join" "$DIR/n$i.cluster-id"
    mkdir -p "$DIR"; echo "$i" >>"$REMOVED"
    MEMBERS=($(members_now)); write_state
    echo "its data dir is deleted; its id $id is never used again."
    echo "Next:"
    echo "  scripts/cluster.sh status"
    echo "  scripts/cluster.sh add n$(( $(printf '%s\n' "${MEMBERS[@]}" $( [[ -f "$ADDED" ]] && cut -d' ' -f1 "$ADDED") $( [[ -f "$REMOVED" ]] && cat "$REMOVED") | sort -n | tail -n 1) + 1 ))   # a new member in its place"
    ;;
  heal)
    lab_post "${1:-}" "/lab/partition?on=false"
    ;;
  *)
    usage
    ;;
esac
