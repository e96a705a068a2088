package io.rota.raft.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One step of a simulated run. Parameters are raw numbers interpreted against the cluster when the step
 * runs ({@code a % nodes}, {@code a % messagesInFlight}), so any subsequence of a run is itself a valid
 * run: that is what lets {@link Simulation#shrink} cut a failing run down to a few steps.
 */
public record Action(Kind kind, int a, int b) {

    /** The kinds of step, with their weight in a random run (see {@link #randomRun}). */
    public enum Kind {
        /** Deliver the in-flight message {@code a} (any of them: the network reorders). */
        DELIVER(440),
        /** Advance node {@code a}'s clock by one tick. */
        TICK(240),
        /** Advance every node's clock by one tick. */
        TICK_ALL(50),
        /** A client proposes {@code 1 + b % 4} commands at node {@code a}. */
        PROPOSE(80),
        /** A client starts a linearizable read at node {@code a}. */
        READ(40),
        /** The network loses in-flight message {@code a}. */
        DROP(30),
        /** The network duplicates in-flight message {@code a}. */
        DUPLICATE(20),
        /** Cut the network: shape {@code a} (isolate, split, one-way, bridge) chosen with {@code b}. */
        PARTITION(15),
        /** Repair every link. */
        HEAL(20),
        /**
         * Node {@code a} crashes, losing all it had not persisted. {@code b % 3}: 0 at once; 1 in its next
         * Ready that writes, after sending leader messages but before persisting; 2 after persisting,
         * before sending the rest.
         */
        CRASH(10),
        /** Node {@code a} restarts from its disk. */
        RESTART(20),
        /** The leader is asked to transfer leadership to node {@code a} (§3.10). */
        TRANSFER(5),
        /** Node {@code a} snapshots its state machine and compacts its log (§7). */
        COMPACT(10),
        /**
         * Node {@code a}'s runtime reports node {@code b} down ({@code RaftNode.reportPeerDown}); true or a
         * false alarm, it must never break safety.
         */
        PEER_DOWN(10),
        /**
         * A membership change at the leader (thesis chapter 4): {@code b} picks add learner, promote, add
         * voter, remove, remove the leader, or replace; {@code a} picks the server.
         */
        CHANGE(50);

        final int weight;

        Kind(int weight) {
            this.weight = weight;
        }
    }

    /**
     * A random run of {@code steps} actions, fully determined by {@code seed}. Every fourth seed is
     * stormy: crashes, restarts, partitions and losses five times as often, and elections with them.
     */
    public static List<Action> randomRun(long seed, int steps) {
        SplittableRandom random = new SplittableRandom(seed);
        boolean stormy = Math.floorMod(seed, 4) == 3;
        int[] weights = new int[Kind.values().length];
        int total = 0;
        for (Kind k : Kind.values()) {
            boolean fault = k == Kind.CRASH || k == Kind.RESTART || k == Kind.PARTITION || k == Kind.HEAL
                    || k == Kind.DROP || k == Kind.TRANSFER || k == Kind.PEER_DOWN || k == Kind.CHANGE;
            weights[k.ordinal()] = stormy && fault ? 5 * k.weight : k.weight;
            total += weights[k.ordinal()];
        }
        List<Action> run = new ArrayList<>(steps);
        for (int i = 0; i < steps; i++) {
            int pick = random.nextInt(total);
            Kind kind = null;
            for (Kind k : Kind.values()) {
                pick -= weights[k.ordinal()];
                if (pick < 0) {
                    kind = k;
                    break;
                }
            }
            run.add(new Action(kind, random.nextInt(1 << 20), random.nextInt(1 << 20)));
        }
        return run;
    }

    @Override
    public String toString() {
        return kind + "(" + a + "," + b + ")";
    }
}
