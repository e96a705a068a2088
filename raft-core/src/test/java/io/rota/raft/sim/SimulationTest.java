package io.rota.raft.sim;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Deterministic simulation of clusters that start with 3, 4 and 5 voters (and two spare servers) under
 * message loss, duplication, reordering, partitions (full, one-way, bridge), crashes at any point of the
 * Ready contract, restarts, snapshots, leadership transfers and membership changes (add, promote, remove,
 * replace, the leader included), with every Raft safety property checked after every step (see
 * {@link InvariantChecker}) and liveness checked after the faults heal.
 *
 * <p>System properties: {@code sim.seeds} (per cluster size; default 500), {@code sim.steps} (default
 * 1000), {@code sim.seedBase} (default 1; seeds are seedBase, seedBase+1, ...), {@code sim.seed} (replay
 * just this seed, with {@code sim.nodes}). The long sweep: {@code -Dsim.seeds=10000}.
 */
@Tag("sim")
class SimulationTest {

    private static final int SEEDS = Integer.getInteger("sim.seeds", 500);
    private static final int STEPS = Integer.getInteger("sim.steps", 1000);
    private static final long SEED_BASE = Long.getLong("sim.seedBase", 1L);

    @Test
    @DisplayName("3 nodes: Raft's safety properties hold after every step of every seeded faulty run, and the cluster recovers")
    void threeNodes() throws Exception {
        sweep(3);
    }

    @Test
    @DisplayName("4 nodes: Raft's safety properties hold after every step of every seeded faulty run, and the cluster recovers")
    void fourNodes() throws Exception {
        sweep(4);
    }

    @Test
    @DisplayName("5 nodes: Raft's safety properties hold after every step of every seeded faulty run, and the cluster recovers")
    void fiveNodes() throws Exception {
        sweep(5);
    }

    /**
     * Runs that caught a deliberately broken membership rule (docs/core.md, "Does the checker catch real
     * bugs?"), as {voters, seed}; with the rules intact each must pass. They name runs of the current action
     * mix: a new action kind, or a new weight, changes what every seed draws.
     */
    private static final long[][] MEMBERSHIP_MUTATION_SEEDS = {
            {3, 2}, {4, 4}, {5, 5},         // a second uncommitted change allowed: One change at a time
            {3, 52}, {4, 277}, {5, 637},    // the same, that invariant switched off: Log Matching, Leader Completeness, Election Safety
            {3, 3}, {4, 17}, {5, 8},        // a truncated configuration entry kept: Configuration at append
            {3, 12}, {4, 4}, {5, 12},       // learners counted toward commitment: Commitment quorum
            {3, 12}, {4, 40}, {5, 15},      // a snapshot given the latest configuration, not its index's: self-stop, liveness
            {3, 104}, {4, 19930},           // a removed leader that lost its lead may not stand: liveness
            {3, 12}, {4, 120}, {5, 15},     // a driver snapshot given the latest configuration (issue 32): no self-stop
    };

    @Test
    @DisplayName("§4: the runs that caught broken membership rules pass with the rules intact")
    void membershipMutationSeeds() {
        for (long[] run : MEMBERSHIP_MUTATION_SEEDS) {
            check(runSeed((int) run[0], run[1]));
        }
    }

    private void sweep(int nodes) throws Exception {
        String only = System.getProperty("sim.seed");
        if (only != null) {
            if (Integer.getInteger("sim.nodes", nodes) == nodes) {
                check(runSeed(nodes, Long.parseLong(only)));
            }
            return;
        }
        long started = System.nanoTime();
        int threads = Runtime.getRuntime().availableProcessors();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Simulation.Outcome>> futures = new ArrayList<>();
            for (long s = SEED_BASE; s < SEED_BASE + SEEDS; s++) {
                long seed = s;
                futures.add(pool.submit(() -> runSeed(nodes, seed)));
            }
            long committed = 0;
            long proposals = 0;
            long reads = 0;
            long changes = 0;
            for (Future<Simulation.Outcome> f : futures) {
                Simulation.Outcome o = f.get();
                check(o);
                committed += o.committed();
                proposals += o.proposals();
                reads += o.reads();
                changes += o.changes();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("simulation: %d nodes (+%d spares), %d seeds (%d..%d) x %d steps = %d steps, 0 violations, "
                            + "liveness ok; %d entries committed, %d commands accepted, %d reads released, "
                            + "%d membership changes committed; %.1f s%n",
                    nodes, SimCluster.SPARES, SEEDS, SEED_BASE, SEED_BASE + SEEDS - 1, STEPS, (long) SEEDS * STEPS,
                    committed, proposals, reads, changes, seconds);
            assertTrue(committed > SEEDS, "runs must make progress, or they prove little: " + committed);
            assertTrue(changes > SEEDS / 2, "runs must change the membership, or they prove little about it: " + changes);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Simulation.Outcome runSeed(int nodes, long seed) {
        return Simulation.run(nodes, seed, Action.randomRun(seed, STEPS), true);
    }

    private static void check(Simulation.Outcome o) {
        if (!o.ok()) {
            fail(Simulation.report(o, Simulation.shrink(o, true, 3_000)));
        }
    }
}
