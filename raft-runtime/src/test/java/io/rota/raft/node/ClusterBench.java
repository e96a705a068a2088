package io.rota.raft.node;

import io.rota.raft.core.Entry;
import io.rota.raft.core.StateMachine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Commit throughput and latency of a 3-node cluster in one JVM — real RocksDB with sync=true, real Netty
 * on 127.0.0.1, production timings (100 ms ticks) — with a no-op state machine, at 1, 64 and 256
 * proposals in flight (closed loop: each client proposes again as soon as its previous write is applied
 * on the leader). 256-byte commands.
 *
 * <p>Not a unit test. Run: {@code scripts/bench.sh cluster [seconds-per-level]}.
 */
public final class ClusterBench {

    private static final int COMMAND_BYTES = 256;
    private static final int[] IN_FLIGHT = {1, 64, 256};

    private ClusterBench() {
    }

    /** Applies nothing: the benchmark measures Raft, not a state machine. */
    static final class NoOpMachine implements StateMachine<Long> {
        @Override
        public List<Long> apply(List<Entry> committed) {
            return Collections.nCopies(committed.size(), null);
        }

        @Override
        public Capture capture() {
            return out -> { };
        }

        @Override
        public void restore(java.io.InputStream snapshot) {
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        Path dir = Files.createTempDirectory("rota-cluster-bench");
        System.out.printf("3-node cluster in one JVM (RocksDB sync=true, Netty on 127.0.0.1), no-op state machine, "
                + "%d-byte commands, %.0f s per level, in %s%n%n", COMMAND_BYTES, seconds, dir);
        System.out.println("| proposals in flight | commits/s | p50 latency | p99 latency |");
        System.out.println("|---:|---:|---:|---:|");
        try (LocalCluster cluster = new LocalCluster(dir, 3, cfg -> cfg, NoOpMachine::new)) {
            RaftDriver<Long> leader = cluster.node(cluster.awaitLeader());
            run(leader, 16, 1.0); // warm-up: JIT, connections, RocksDB files
            for (int inFlight : IN_FLIGHT) {
                long[] latencies = run(leader, inFlight, seconds);
                Arrays.sort(latencies);
                System.out.printf("| %d | %,.0f | %.2f ms | %.2f ms |%n", inFlight, latencies.length / seconds,
                        latencies[latencies.length / 2] / 1e6, latencies[(int) (latencies.length * 0.99)] / 1e6);
            }
        }
    }

    /** Closed loop with {@code inFlight} clients for {@code seconds}; returns every write's latency (ns). */
    private static long[] run(RaftDriver<Long> leader, int inFlight, double seconds) throws InterruptedException {
        byte[] command = new byte[COMMAND_BYTES];
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch stopped = new CountDownLatch(inFlight);
        for (int c = 0; c < inFlight; c++) {
            client(leader, command, latencies, running, stopped);
        }
        Thread.sleep((long) (seconds * 1000)); // the measurement window, in a benchmark main, not a test
        running.set(false);
        if (!stopped.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("writes did not drain");
        }
        return latencies.stream().mapToLong(Long::longValue).toArray();
    }

    private static void client(RaftDriver<Long> leader, byte[] command, List<Long> latencies, AtomicBoolean running,
                               CountDownLatch stopped) {
        long start = System.nanoTime();
        leader.propose(command, Duration.ofSeconds(10)).whenComplete((r, e) -> {
            if (e != null) {
                throw new IllegalStateException("write failed during the benchmark", e);
            }
            if (running.get()) {
                latencies.add(System.nanoTime() - start);
                client(leader, command, latencies, running, stopped);
            } else {
                stopped.countDown();
            }
        });
    }
}
