package io.rota.server.sim;

/**
 * One seeded run of the server layer: members, clients, and a nemesis that crashes, pauses, partitions
 * (members from members, and from clients) and skews clocks, for {@code seconds} of simulated time; then
 * everything heals, and the cluster must serve again (a write and a lock acquisition acknowledged).
 */
final class ServerSimulation {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private ServerSimulation() {
    }

    /** Run seed {@code seed}; throws AssertionError naming the seed if an invariant breaks. */
    static ServerWorld run(long seed, int members, int seconds) {
        ServerWorld w = new ServerWorld(seed, members);
        w.start();
        for (int i = 1; i <= 3; i++) {
            w.addClient(new SimClient.LockClient(w, "locker-" + i));
        }
        for (int i = 1; i <= 2; i++) {
            w.addClient(new SimClient.Writer(w, "writer-" + i));
        }
        w.addClient(new SimClient.Reader(w, "reader"));
        long end = seconds * S;
        scheduleNemesis(w, end);
        w.runUntil(end);
        w.healAll();
        long writesBefore = w.acknowledgedWrites;
        long locksBefore = w.lockAcquisitions;
        w.runUntil(end + 20 * S);
        if (w.acknowledgedWrites == writesBefore || w.lockAcquisitions == locksBefore) {
            w.fail("liveness: 20 s after every fault healed, " + (w.acknowledgedWrites - writesBefore)
                    + " writes and " + (w.lockAcquisitions - locksBefore) + " lock acquisitions were acknowledged");
        }
        return w;
    }

    /**
     * One seeded run of the apply-totality sweep (issue 30): the same members and nemesis, no clients, and
     * {@link CommandGenerator}'s commands — every op, boundary values, bad addresses, non-commands — appended
     * through the leader's driver every few milliseconds. The world checks after every event that no member
     * stopped itself, that every entry got its op's response or a typed error, and that the members' whole
     * states agree at the same index; after every fault heals, generated entries must still be answered.
     */
    static ServerWorld runApplySweep(long seed, int members, int seconds) {
        ServerWorld w = new ServerWorld(seed, members);
        w.applySweep = true;
        w.generator = new CommandGenerator(w.random);
        w.start();
        long end = seconds * S;
        scheduleNemesis(w, end);
        scheduleGenerated(w, end + 20 * S);
        w.runUntil(end);
        w.healAll();
        long answeredBefore = w.generatedResults;
        w.runUntil(end + 20 * S);
        if (w.generatedResults == answeredBefore) {
            w.fail("liveness: 20 s after every fault healed, no generated entry was answered");
        }
        return w;
    }

    private static void scheduleGenerated(ServerWorld w, long end) {
        long t = 500 * MS;
        while (t < end) {
            w.loop.at(t, w::proposeGenerated);
            t += w.random.nextLong(2 * MS, 40 * MS);
        }
    }

    static void scheduleNemesis(ServerWorld w, long end) {
        long t = 2 * S;
        while (t < end - 2 * S) {
            long at = t;
            w.loop.at(at, () -> fault(w));
            t += w.random.nextLong(300 * MS, 2_500 * MS);
        }
    }

    private static void fault(ServerWorld w) {
        int n = w.members.size();
        int target = w.random.nextInt(n);
        if (w.random.nextBoolean()) {
            for (SimMember m : w.members) {
                if (m.alive && m.driver.leadership() != null) {
                    target = m.index;   // the leader is the interesting victim half the time
                }
            }
        }
        switch (w.random.nextInt(6)) {
            case 0 -> w.crash(target, w.random.nextLong(100 * MS, 4 * S));
            case 1 -> w.pause(target, w.random.nextLong(50 * MS, 3 * S));
            case 2 -> w.isolate(target, w.random.nextBoolean(), w.random.nextLong(500 * MS, w.random.nextInt(4) == 0 ? 12 * S : 5 * S));
            case 3 -> {
                long magnitude = new long[] {100, 2_000, 60_000, 3_600_000}[w.random.nextInt(4)];
                w.stepWallClock(target, w.random.nextBoolean() ? magnitude : -magnitude);
            }
            case 4 -> w.setRate(target, w.driftPpm());
            default -> { }
        }
    }
}
