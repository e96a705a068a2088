package io.rota.server.sim;

import org.junit.jupiter.api.Test;

/**
 * The server layer under the deterministic simulator (issue 11): real driver, state machine, lease keeper
 * and router on simulated members with their own drifting, stepping clocks, crashes, pauses and
 * partitions; the invariants of {@link ServerWorld} are checked after every event.
 *
 * <pre>
 * ./mvnw -B verify                                  # default: 300 seeds × 30 s each for 3 and 5 members (as the core)
 * ./mvnw -B verify -pl kv-server -am -Dtest=ServerSimulationTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dserversim.seeds=10000                       # the long sweep (10,000 seeds per size)
 * ... -Dserversim.seed=42 -Dserversim.members=5     # replay one seed
 * </pre>
 */
class ServerSimulationTest {

    private static final int SECONDS = Integer.getInteger("serversim.seconds", 30);

    @Test
    void threeMembers() {
        sweep(3, Integer.getInteger("serversim.seeds", 300));
    }

    @Test
    void fiveMembers() {
        sweep(5, Integer.getInteger("serversim.seeds", 300));
    }

    private static void sweep(int members, int seeds) {
        String one = System.getProperty("serversim.seed");
        if (one != null) {
            if (Integer.getInteger("serversim.members", 3) == members) {
                ServerWorld w = ServerSimulation.run(Long.parseLong(one), members, SECONDS);
                System.out.println("seed " + one + ": " + w.summary());
            }
            return;
        }
        long base = Long.getLong("serversim.seedBase", 1);
        long events = 0;
        long expiries = 0;
        long locks = 0;
        long start = System.nanoTime();
        for (long seed = base; seed < base + seeds; seed++) {
            ServerWorld w = ServerSimulation.run(seed, members, SECONDS);
            events += w.loop.processed();
            expiries += w.expiries;
            locks += w.lockAcquisitions;
        }
        System.out.printf("server simulation, %d members: %d seeds x %d s, %,d events, %,d lock acquisitions, "
                        + "%,d lease expiries, %.1f s%n", members, seeds, SECONDS, events, locks, expiries,
                (System.nanoTime() - start) / 1e9);
    }
}
