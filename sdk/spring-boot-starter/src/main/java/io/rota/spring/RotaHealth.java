package io.rota.spring;

import io.rota.client.ConnectionState;
import io.rota.client.MemberStatus;
import io.rota.client.RotaClient;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Rota health check, apart from either Boot line's health API (the two indicators adapt it): asks the
 * members for their status in turn until one answers within the timeout.
 *
 * <ul>
 *   <li><b>reachable</b>: a member answered;</li>
 *   <li><b>leader known</b>: that member knows a leader (else the cluster has no quorum now, and writes wait);</li>
 *   <li><b>session alive</b>: the client's connection state is not LOST (a lease it kept alive, such as a
 *       running job's lock, was not lost).</li>
 * </ul>
 * UP when all three hold; DOWN otherwise, with the reason among the details.
 */
public final class RotaHealth {

    private final RotaClient rota;
    private final Duration timeout;

    /**
     * A check for one client.
     *
     * @param rota    the client
     * @param timeout how long to wait for each member's answer
     */
    public RotaHealth(RotaClient rota, Duration timeout) {
        this.rota = rota;
        this.timeout = timeout;
    }

    /**
     * What one check found.
     *
     * @param up      whether Rota is usable from here
     * @param details what the health endpoint shows
     */
    public record Report(boolean up, Map<String, Object> details) {
    }

    /**
     * Runs the check (blocks at most the timeout per member).
     *
     * @return the report
     */
    public Report check() {
        Map<String, Object> details = new LinkedHashMap<>();
        ConnectionState state = rota.connectionState();
        details.put("connectionState", state.name());
        String failures = "";
        for (String endpoint : rota.endpoints()) {
            try {
                MemberStatus s = rota.cluster().statusAsync(endpoint).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                details.put("endpoint", endpoint);
                details.put("member", s.name());
                details.put("leaderId", Long.toHexString(s.leaderId()));
                details.put("raftTerm", s.raftTerm());
                details.put("revision", s.revision());
                boolean leaderKnown = s.leaderId() != 0;
                boolean sessionAlive = state != ConnectionState.LOST;
                if (!leaderKnown) {
                    details.put("reason", "member " + s.name() + " knows no leader: the cluster has no quorum now");
                } else if (!sessionAlive) {
                    details.put("reason", "a lease this client kept alive was lost (connection state LOST)");
                }
                return new Report(leaderKnown && sessionAlive, details);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failures += endpoint + ": interrupted; ";
                break;
            } catch (ExecutionException e) {
                failures += endpoint + ": " + e.getCause().getMessage() + "; ";
            } catch (TimeoutException e) {
                failures += endpoint + ": no answer in " + timeout.toMillis() + " ms; ";
            }
        }
        details.put("reason", "no member answered: " + failures.trim());
        return new Report(false, details);
    }
}
