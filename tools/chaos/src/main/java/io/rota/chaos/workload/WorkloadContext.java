package io.rota.chaos.workload;

import io.rota.chaos.history.HistoryWriter;
import io.rota.client.RotaClient;

import java.time.Duration;
import java.util.List;
import java.util.function.IntFunction;

/**
 * What a workload needs from the runner.
 *
 * @param endpoints       the members' own client addresses, comma-separated (for the final reads, every fault
 *                        healed)
 * @param clientEndpoints client process c's view of the members: the addresses it dials, through the client
 *                        proxies that the partition nemesis cuts (see {@code Network#clientEndpoints}), or,
 *                        under the membership nemesis, the slots that follow the members ({@code MemberSlots})
 * @param history         where every operation is recorded (it stamps each event with the run's clock)
 * @param originNanos     the {@link System#nanoTime} at which the run started: time 0 of the history
 * @param seed            the run's seed (each client derives its own randomness from it)
 * @param clients         how many concurrent client processes to run
 * @param rate            target operations per second, all clients together
 * @param login           the workload's user when the run has auth enabled; null when auth is off
 */
public record WorkloadContext(String endpoints, IntFunction<String> clientEndpoints, HistoryWriter history,
                              long originNanos, long seed, int clients, double rate, Login login) {

    /**
     * The user every client of the workload authenticates as, on a run with auth enabled ({@code --auth}).
     *
     * @param user     the user name
     * @param password its password
     */
    public record Login(String user, String password) {
    }

    /** Whether the run has auth enabled (then {@link #login} is the workload's user). */
    public boolean auth() {
        return login != null;
    }

    /**
     * A new client of the cluster for client process {@code c} of a workload (the caller closes it).
     *
     * @param c              the client process's number, 0 .. clients - 1
     * @param callTimeout    a call's whole budget, retries included; past it the operation is indeterminate
     * @param attemptTimeout one try on one member
     * @return the client
     */
    public RotaClient newClient(int c, Duration callTimeout, Duration attemptTimeout) {
        RotaClient.Builder b = RotaClient.builder().endpoints(clientEndpoints.apply(c)).callTimeout(callTimeout)
                .attemptTimeout(attemptTimeout);
        if (login != null) {
            b.credentials(login.user(), login.password().toCharArray());
        }
        return b.build();
    }

    /**
     * A {@link System#nanoTime} instant on the history's time base (nanoseconds since the run started).
     *
     * @param nanoTime an instant of this JVM's monotonic clock
     * @return the same instant as a history time
     */
    public long runTime(long nanoTime) {
        return nanoTime - originNanos;
    }

    /**
     * Waits for a workload's client threads, each at most {@code each}; returns early if interrupted.
     *
     * @param threads the threads
     * @param each    the longest wait per thread
     */
    static void joinAll(List<Thread> threads, Duration each) {
        for (Thread t : threads) {
            try {
                t.join(each.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
