#!/usr/bin/env bash
# Benchmarks, one command each. Usage:
#   scripts/bench.sh log [seconds-per-size]       RocksDB log append, sync=true, batches of 1/16/256 entries
#   scripts/bench.sh cluster [seconds-per-level]  3-node in-JVM cluster, commits/s and latency at 1/64/256 in flight
# Builds the test classes first. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
what="${1:-}"
shift || true
case "$what" in
  log) main=io.rota.raft.storage.LogAppendBench ;;
  cluster) main=io.rota.raft.node.ClusterBench ;;
  *) echo "usage: scripts/bench.sh log|cluster [seconds]" >&2; exit 2 ;;
esac
echo "building the test classes (./mvnw test-compile)..." >&2
./mvnw -q -B -pl raft-core -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath >&2
cp=raft-core/target/test-classes:raft-core/target/classes:proto/target/classes:$(cat raft-core/target/test.classpath)
exec java -Xmx2g -cp "$cp" "$main" "$@"
