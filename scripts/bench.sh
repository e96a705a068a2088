#!/usr/bin/env bash
# Benchmarks, one command each. Usage:
#   scripts/bench.sh log [seconds-per-size]       RocksDB log append, sync=true, batches of 1/16/256 entries
#   scripts/bench.sh cluster [seconds-per-level]  3-node in-JVM cluster, commits/s and latency at 1/64/256 in flight
#   scripts/bench.sh snapshot [keys,keys,...]     how long a snapshot blocks the driver thread (the capture on the driver, the persist off it)
#   scripts/bench.sh compare [--systems rota,etcd,zk] [--quick] [--out FILE] [rota-bench compare options]
#                                                 Rota, etcd and ZooKeeper side by side, each alone on the machine:
#                                                 writes, reads, locks, failover gap, server CPU per op
#                                                 (docs/performance.md; --help lists every option)
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
  ./mvnw -q -B -DskipTests package -pl kv-server,bench,bench/etcd,bench/zookeeper -am >&2
  echo "the peers start with ../shared/tools/etcd-cluster.sh and zk-cluster.sh, which apt-get install" \
    "Debian's etcd-server/etcd-client and zookeeper packages if they are missing" >&2
  exec java -jar bench/target/rota-bench.jar compare --root . "$@"
fi
module=raft-core
case "$what" in
  log) main=io.rota.raft.storage.LogAppendBench ;;
  cluster) main=io.rota.raft.node.ClusterBench ;;
  snapshot) main=io.rota.server.kv.SnapshotBench; module=kv-server ;;
  write) main=io.rota.server.bench.WriteBench; module=kv-server ;;
  *) echo "usage: scripts/bench.sh log|cluster|snapshot|write|compare [arguments]" >&2; exit 2 ;;
esac
echo "building the test classes (./mvnw test-compile)..." >&2
./mvnw -q -B -pl "$module" -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath >&2
cp=$module/target/test-classes:$module/target/classes:raft-core/target/classes:proto/target/classes
exec java -Xmx2g -cp "$cp:$(cat $module/target/test.classpath)" "$main" "$@"
