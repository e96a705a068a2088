package io.rota.chaos.nemesis;

import io.rota.testkit.ProcessCluster;
import java.util.List;
import java.util.Random;

/**
 * Network partitions through the proxies: of the Raft traffic, and of the clients living beside each member
 * the same way ({@link io.rota.chaos.net.Network}). Each fault is one of:
 * <ul>
 *   <li><b>minority</b>: a random follower is cut off from the other two (the majority keeps going);</li>
 *   <li><b>isolated leader</b>: the leader is cut off; the other two elect a new one while the old one may
 *       still believe it leads;</li>
 *   <li><b>bridge</b>: two members cannot talk to each other, the third talks to both;</li>
 *   <li><b>one-way</b>: frames from one member to another are dropped, the reverse direction flows (half the
 *       time the leader's outgoing traffic to a follower, else a follower's to the leader).</li>
 * </ul>
 * Heal restores every link.
 */
public final class PartitionNemesis implements Nemesis {

    private final Faults faults;

    /**
     * A partition nemesis.
     *
     * @param faults the cluster and its network
     */
    public PartitionNemesis(Faults faults) {
        this.faults = faults;
    }

    @Override
    public String name() {
        return "partition";
    }

    @Override
    public String fault(Random random) {
        int leader = faults.leaderOrAny(random);
        int follower = faults.other(random, leader);
        switch (random.nextInt(4)) {
            case 0 -> {
                faults.network().isolate(List.of(follower));
                return "partition minority: " + ProcessCluster.name(follower) + " alone";
            }
            case 1 -> {
                faults.network().isolate(List.of(leader));
                return "partition isolated leader: " + ProcessCluster.name(leader) + " alone";
            }
            case 2 -> {
                int bridge = random.nextInt(faults.cluster().size());
                int a = faults.other(random, bridge);
                int b = 3 - bridge - a; // the third of three members
                faults.network().cut(a, b);
                return "partition bridge: " + ProcessCluster.name(bridge) + " sees both, " + ProcessCluster.name(a)
                        + " x " + ProcessCluster.name(b);
            }
            default -> {
                boolean fromLeader = random.nextBoolean();
                int from = fromLeader ? leader : follower;
                int to = fromLeader ? follower : leader;
                faults.network().block(from, to);
                return "partition one-way: " + ProcessCluster.name(from) + " -> " + ProcessCluster.name(to)
                        + " dropped (" + (fromLeader ? "leader's" : "follower's") + " frames)";
            }
        }
    }

    @Override
    public String heal() {
        List<String> was = faults.network().faults();
        faults.network().heal();
        return was.isEmpty() ? "network already whole" : "network healed (was blocked: " + String.join(" ", was) + ")";
    }
}
