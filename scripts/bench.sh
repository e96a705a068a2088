#!/usr/bin/env bash
# Benchmarks, one command each. Usage:
#   scripts/bench.sh log [seconds-per-size]       RocksDB log append, sync=true, batches of 1/16/256 entries
#   scripts/bench.sh cluster [seconds-per-level]  3-node in-JVM cluster, commits/s and latency at 1/64/256 in flight
#   scripts/bench.sh snapshot [keys,keys,...]     how long a snapshot blocks the driver thread (the capture on the driver, the persist off it)
#   scripts/bench.sh compare [--systems rota,etcd,zk] [--quick] [--out FILE] [rota-bench compare options]
#                                                 Rota, etcd and ZooKeeper side by side, each alone on the machine:
#                                                 writes, reads, locks, failover gap, server CPU per op
#                                                 (docs/performance.md; --help lists every option)
#   scripts/bench.sh disk [--dir DIR] [rota-bench disk options]
#                                                 what the disk alone allows: small appends made durable with
#                                                 fdatasync, by one writer and by three at once (members sharing the
#                                                 disk), and the ceilings that puts on writes at one in flight and on
#                                                 lock cycles (docs/performance.md, "The disk's floor")
#   scripts/bench.sh tls [seconds-per-level]      what TLS costs: a 3-member cluster (scripts/cluster.sh) plaintext
#                                                 and with --tls, writes of 256 B at 1/64/256 in flight through the
#                                                 bench driver (the SDK), modes interleaved round by round so drift
#                                                 shows. ROTA_BENCH_ROUNDS (default 2), ROTA_BENCH_OPENSSL=1 adds a
#                                                 --tls-provider openssl mode, ROTA_BASE_PORT (default 9600) moves
#                                                 the ports (docs/performance.md, "The cost of TLS")
#   scripts/bench.sh write ENDPOINTS PIDS N SECONDS [--threads]
#                                                 the SDK's put at N in flight against running members (PIDS: theirs,
#                                                 comma-separated), with their CPU per write from /proc
# Builds the test classes (compare: the bench jars and the server jar) first. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
what="${1:-}"
shift || true
if [[ "$what" == compare ]]; then
  # The server jar and the three driver jars; the peers' drivers are separate jars (own Netty 4.1).
  echo "building kv-server/target/rota-server.jar and the bench jars (./mvnw package -DskipTests)..." >&2
  ./mvnw -q -B -DskipTests package -pl kv-server/server,tools/bench,tools/bench/etcd,tools/bench/zookeeper -am >&2
  echo "the peers start with ../shared/tools/etcd-cluster.sh and zk-cluster.sh, which apt-get install" \
    "Debian's etcd-server/etcd-client and zookeeper packages if they are missing" >&2
  exec java -jar tools/bench/target/rota-bench.jar compare --root . "$@"
fi
if [[ "$what" == disk ]]; then
  echo "building tools/bench/target/rota-bench.jar (./mvnw package -DskipTests)..." >&2
  ./mvnw -q -B -DskipTests package -pl tools/bench -am >&2
  exec java -jar tools/bench/target/rota-bench.jar disk "$@"
fi
if [[ "$what" == tls ]]; then
  measure_s="${1:-10}"
  [[ "$measure_s" =~ ^[0-9]+$ && "$measure_s" -gt 0 ]] || { echo "usage: scripts/bench.sh tls [seconds-per-level]" >&2; exit 2; }
  rounds="${ROTA_BENCH_ROUNDS:-2}"
  base="${ROTA_BASE_PORT:-9600}"
  modes=(plain tls-jdk)
  if [[ "${ROTA_BENCH_OPENSSL:-0}" == 1 ]]; then modes+=(tls-openssl); fi
  command -v openssl >/dev/null || { echo "scripts/bench.sh tls: needs openssl for the certificates" \
    "(Debian: apt-get install openssl)" >&2; exit 2; }
  echo "building kv-server/target/rota-server.jar and tools/bench/target/rota-bench.jar (./mvnw package -DskipTests)..." >&2
  ./mvnw -q -B -DskipTests package -pl kv-server/server,tools/bench -am >&2
  work="$(mktemp -d "${TMPDIR:-/tmp}/rota-bench-tls.XXXXXX")"
  cluster_dir=""
  stop_cluster() {
    if [[ -n "$cluster_dir" ]]; then
      ROTA_BASE_PORT="$base" ROTA_CLUSTER_DIR="$cluster_dir" scripts/cluster.sh stop >&2 || true
      cluster_dir=""
    fi
  }
  trap 'stop_cluster; rm -rf "$work"' EXIT
  endpoints="127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2)),127.0.0.1:$((base + 3))"
  for ((round = 1; round <= rounds; round++)); do
    for mode in "${modes[@]}"; do
      cluster_dir="$work/$mode-$round"
      start=(start); provider=""; tls=()
      if [[ "$mode" != plain ]]; then
        start=(start --tls); provider="${mode#tls-}"
        tls=(--cacert "$cluster_dir/tls/ca.pem" --cert "$cluster_dir/tls/client.pem" --key "$cluster_dir/tls/client.key")
      fi
      echo "round $round/$rounds, $mode: starting 3 members on ROTA_BASE_PORT=$base..." >&2
      ROTA_BASE_PORT="$base" ROTA_CLUSTER_DIR="$cluster_dir" ROTA_TLS_PROVIDER="$provider" \
        scripts/cluster.sh "${start[@]}" >&2
      # The driver prints "@result workload=write-64 ops=N seconds=S p50=US p99=US ..." (tools/bench/.../driver/Markers.java).
      java -cp tools/bench/target/rota-bench.jar io.rota.bench.driver.DriverMain "${tls[@]}" rota "$endpoints" 3000 \
        $((measure_s * 1000)) write-1,write-64,write-256 >"$work/$mode-$round.out" 2>>"$work/driver.log" \
        || { echo "the driver failed ($mode, round $round): see its output below" >&2; cat "$work/$mode-$round.out" \
          "$work/driver.log" >&2; exit 1; }
      grep '^@result' "$work/$mode-$round.out" | sed "s/^/mode=$mode round=$round /" >>"$work/results"
      stop_cluster
    done
  done
  # One row per in-flight level and mode: writes/s of each round and their mean, mean p50 and p99, and the mean
  # writes/s against plaintext's at the same level.
  awk -v rounds="$rounds" -v modes="${modes[*]}" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      m = f["mode"]; w = f["workload"]; sub("write-", "", w)
      rate = f["ops"] / f["seconds"]; per[m, w] = per[m, w] sprintf(" %.0f", rate)
      sum[m, w] += rate; p50[m, w] += f["p50"]; p99[m, w] += f["p99"]; n[m, w]++ }
    END {
      split(modes, ms, " ")
      print "| in flight | mode | writes/s per round | writes/s (mean) | p50 ms | p99 ms | writes/s vs plain |"
      print "|---:|---|---|---:|---:|---:|---:|"
      split("1 64 256", levels, " ")
      for (l = 1; l <= 3; l++) for (k = 1; k in ms; k++) {
        m = ms[k]; w = levels[l]
        if (!n[m, w]) continue
        mean = sum[m, w] / n[m, w]; plain = sum["plain", w] / n["plain", w]
        printf "| %s | %s |%s | %.0f | %.2f | %.2f | %.2f |\n", w, m, per[m, w], mean,
          p50[m, w] / n[m, w] / 1000, p99[m, w] / n[m, w] / 1000, (plain > 0 ? mean / plain : 0)
      }
    }' "$work/results"
  echo >&2
  echo "$rounds round(s) of ${modes[*]}, ${measure_s} s per level after 3 s of warm-up; CPUs: $(nproc)," \
    "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  exit 0
fi
module=raft-runtime
case "$what" in
  log) main=io.rota.raft.storage.LogAppendBench ;;
  cluster) main=io.rota.raft.node.ClusterBench ;;
  snapshot) main=io.rota.server.kv.SnapshotBench; module=kv-server/state ;;
  write) main=io.rota.server.bench.WriteBench; module=tests/system-tests ;;
  *) echo "usage: scripts/bench.sh log|cluster|snapshot|write|compare|disk|tls [arguments]" >&2; exit 2 ;;
esac
echo "building the test classes (./mvnw test-compile)..." >&2
./mvnw -q -B -pl "$module" -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath >&2
cp=$module/target/test-classes:$module/target/classes:raft-runtime/target/classes:raft-core/target/classes
cp=$cp:proto/target/classes
exec java -Xmx2g -cp "$cp:$(cat $module/target/test.classpath)" "$main" "$@"
