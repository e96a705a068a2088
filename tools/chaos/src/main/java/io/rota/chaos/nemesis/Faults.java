package io.rota.chaos.nemesis;

import io.rota.chaos.net.Network;
import io.rota.testkit.ProcessCluster;

import java.util.Random;

/**
 * What the nemeses act on: the real server processes, the proxied network between them and their clients, and
 * the members' clocks.
 *
 * @param cluster the members
 * @param network the fault-injecting proxies between them and to them
 * @param clocks  the members' clock controls, or null when they run without {@code --unsafe-fault-injection}
 */
public record Faults(ProcessCluster cluster, Network network, ClockControl clocks) {

    /**
     * The current leader, or a random member if none is known right now.
     *
     * @param random the run's randomness
     * @return a member index
     */
    public int leaderOrAny(Random random) {
        int leader = cluster.leader();
        return leader >= 0 ? leader : random.nextInt(cluster.size());
    }

    /**
     * A random member other than {@code not}.
     *
     * @param random the run's randomness
     * @param not    the member to avoid
     * @return a member index
     */
    public int other(Random random, int not) {
        int i = random.nextInt(cluster.size() - 1);
        return i >= not ? i + 1 : i;
    }

    /**
     * A member's name with its role if it is the leader, e.g. {@code n2 (leader)}.
     *
     * @param member the member
     * @param leader the leader's index or -1
     * @return a label
     */
    public static String label(int member, int leader) {
        return ProcessCluster.name(member) + (member == leader ? " (leader)" : "");
    }
}
