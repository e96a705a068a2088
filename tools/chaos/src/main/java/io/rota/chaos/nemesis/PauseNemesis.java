package io.rota.chaos.nemesis;

import io.rota.testkit.ProcessCluster;
import java.util.Random;

/**
 * SIGSTOP / SIGCONT: a process frozen with its sockets open, as in a long GC pause or a stalled VM. A fault
 * pauses the leader (half the time) or a follower; heal resumes it. A paused leader wakes up deposed, with
 * requests in flight: the classic source of stale reads and lost writes.
 */
public final class PauseNemesis implements Nemesis {

    private final Faults faults;
    private int paused = -1;

    /**
     * A pause nemesis.
     *
     * @param faults the cluster
     */
    public PauseNemesis(Faults faults) {
        this.faults = faults;
    }

    @Override
    public String name() {
        return "pause";
    }

    @Override
    public String fault(Random random) {
        int leader = faults.leaderOrAny(random);
        paused = random.nextBoolean() ? leader : faults.other(random, leader);
        faults.cluster().pause(paused);
        return "SIGSTOP " + (paused == leader ? ProcessCluster.name(paused) + " (leader)"
                : ProcessCluster.name(paused) + " (follower)");
    }

    @Override
    public String heal() {
        if (paused < 0) {
            return "nothing to resume";
        }
        faults.cluster().resume(paused);
        String s = "SIGCONT " + ProcessCluster.name(paused);
        paused = -1;
        return s;
    }
}
