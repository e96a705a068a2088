package io.rota.chaos.nemesis;

import io.rota.testkit.ProcessCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * kill -9 and restart. A fault kills the leader (half the time) or a random member, and one time in five a
 * second member too (the cluster loses its majority: no progress, but nothing acknowledged may be lost). Heal
 * restarts the dead on their data directories and waits until they answer /health.
 */
public final class KillNemesis implements Nemesis {

    private final Faults faults;
    private final List<Integer> dead = new ArrayList<>();

    /**
     * A kill nemesis.
     *
     * @param faults the cluster
     */
    public KillNemesis(Faults faults) {
        this.faults = faults;
    }

    @Override
    public String name() {
        return "kill";
    }

    @Override
    public String fault(Random random) {
        int leader = faults.cluster().leader();
        int first = leader >= 0 && random.nextBoolean() ? leader : random.nextInt(faults.cluster().size());
        List<String> killed = new ArrayList<>();
        kill(first, leader, killed);
        if (random.nextInt(5) == 0) {
            kill(faults.other(random, first), leader, killed);
        }
        return "kill -9 " + String.join(", ", killed);
    }

    private void kill(int member, int leader, List<String> killed) {
        faults.cluster().kill(member);
        dead.add(member);
        killed.add(Faults.label(member, leader));
    }

    @Override
    public String heal() {
        if (dead.isEmpty()) {
            return "nothing to restart";
        }
        List<String> names = new ArrayList<>();
        for (int member : dead) {
            faults.cluster().startMember(member);
            names.add(ProcessCluster.name(member));
        }
        for (int member : dead) {
            faults.cluster().awaitHealthy(member);
        }
        dead.clear();
        return "restarted " + String.join(", ", names);
    }
}
