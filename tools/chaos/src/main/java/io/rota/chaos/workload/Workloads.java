package io.rota.chaos.workload;

import java.time.Duration;
import java.util.List;

/** The workloads by name, for {@code --workload}. */
public final class Workloads {

    /** The names {@link #create} accepts. */
    public static final List<String> NAMES = List.of("register", "lease", "lock");

    private Workloads() {
    }

    /**
     * Creates a workload.
     *
     * @param name     one of {@link #NAMES}
     * @param keys     how many keys the register workload uses (the lock workload: how many locks)
     * @param election the cluster's election timeout (the lease workload's bounds depend on it)
     * @return a new workload
     * @throws IllegalArgumentException for an unknown name
     */
    public static Workload create(String name, int keys, Duration election) {
        return switch (name) {
            case "register" -> new RegisterWorkload(keys);
            case "lease" -> new LeaseWorkload(election);
            case "lock" -> new LockWorkload(keys);
            default -> throw new IllegalArgumentException("unknown workload '" + name + "': use one of " + NAMES);
        };
    }
}
