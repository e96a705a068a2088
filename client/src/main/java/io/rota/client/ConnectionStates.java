package io.rota.client;

import io.rota.proto.Frame;
import io.rota.proto.StatusRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The client's {@link ConnectionState} and its listeners. The {@link Retrier} reports each attempt's outcome
 * ({@link #answered}, {@link #failed}), the lease keep-alives report a lost lease ({@link #leaseLost}), and
 * {@link RotaClient#close()} reports the close. While no member answers, a probe (a Status call that must
 * name a leader) goes to one member after another with the client's {@link Backoff}, so an idle application
 * that stopped work on {@link ConnectionState#SUSPENDED} still hears {@link ConnectionState#RECONNECTED}.
 *
 * <p>Transitions are decided under this object's lock and handed to the callback thread in that same
 * order; the listeners run there, outside the lock.
 */
final class ConnectionStates {

    private static final Logger log = LoggerFactory.getLogger(RotaClient.class);

    private final ConnectionPool pool;
    private final ClientThreads threads;
    private final long attemptTimeoutNanos;
    private final List<ConnectionStateListener> listeners = new CopyOnWriteArrayList<>();
    private RotaClient client;

    // Guarded by this.
    private ConnectionState state = ConnectionState.SUSPENDED;
    /** Whether a member answered since the last time every configured member failed. */
    private boolean reachable;
    private boolean everConnected;
    private boolean closed;
    private boolean probing;
    /** Configured members that failed since the last answer: all of them means SUSPENDED. */
    private final Set<String> failedSinceAnswer = new HashSet<>();

    ConnectionStates(ConnectionPool pool, ClientThreads threads, long attemptTimeoutNanos) {
        this.pool = pool;
        this.threads = threads;
        this.attemptTimeoutNanos = attemptTimeoutNanos;
    }

    /** The client the listeners are told about (set once, right after it is built). */
    void bind(RotaClient client) {
        this.client = client;
    }

    synchronized ConnectionState current() {
        return state;
    }

    void addListener(ConnectionStateListener listener) {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    void removeListener(ConnectionStateListener listener) {
        listeners.remove(listener);
    }

    /** {@code endpoint} answered (a result, or an error that is not "unavailable"): the cluster works. */
    synchronized void answered(String endpoint) {
        failedSinceAnswer.clear();
        if (closed || (reachable && state != ConnectionState.LOST)) {
            return;
        }
        reachable = true;
        moveTo(everConnected ? ConnectionState.RECONNECTED : ConnectionState.CONNECTED, "answered: " + endpoint);
        everConnected = true;
    }

    /** {@code endpoint} did not answer, or had no leader: once every configured member has, SUSPENDED. */
    synchronized void failed(String endpoint, RotaException why) {
        if (closed || !pool.endpoints().contains(endpoint)) {
            return;
        }
        failedSinceAnswer.add(endpoint);
        if (!failedSinceAnswer.containsAll(pool.endpoints())) {
            return;
        }
        if (reachable && state != ConnectionState.LOST) {
            moveTo(ConnectionState.SUSPENDED, "no member answers; last: " + why.getMessage());
        }
        reachable = false;
        if (!probing) {
            probing = true;
            probeLater(1, endpoint);
        }
    }

    /** A lease kept alive by {@link Leases#keepAlive} expired or was revoked. */
    synchronized void leaseLost(long leaseId, RotaException why) {
        if (closed || state == ConnectionState.LOST) {
            return;
        }
        moveTo(ConnectionState.LOST, "lease " + Long.toHexString(leaseId) + " was lost: " + why.getMessage());
    }

    /** The client is closing: LOST, told before the callback thread stops; nothing follows. */
    synchronized void closing() {
        if (closed) {
            return;
        }
        if (state != ConnectionState.LOST) {
            moveTo(ConnectionState.LOST, "the client was closed");
        }
        closed = true;
    }

    private void moveTo(ConnectionState next, String why) {
        ConnectionState previous = state;
        state = next;
        if (next == ConnectionState.SUSPENDED || next == ConnectionState.LOST) {
            log.warn("Rota client {}: {} -> {} ({})", pool.endpoints(), previous, next, why);
        } else {
            log.info("Rota client {}: {} -> {} ({})", pool.endpoints(), previous, next, why);
        }
        threads.callback(() -> tell(next));
    }

    private void tell(ConnectionState next) {
        for (ConnectionStateListener l : listeners) {
            try {
                l.stateChanged(client, next);
            } catch (RuntimeException e) {
                log.warn("Rota client {}: connection state listener {} threw on {}; the others are still told",
                        pool.endpoints(), l, next, e);
            }
        }
    }

    private void probeLater(int failures, String after) {
        if (!threads.schedule(() -> probe(failures, pool.after(after)), Backoff.delayMs(failures))) {
            synchronized (this) {
                probing = false;
            }
        }
    }

    /** One probe of {@code endpoint}: a Status call whose answer must name a leader. */
    private void probe(int failures, String endpoint) {
        synchronized (this) {
            if (closed || reachable) {
                probing = false;
                return;
            }
        }
        log.debug("Rota client {}: probing {} (attempt {})", pool.endpoints(), endpoint, failures);
        pool.connection(endpoint)
                .thenCompose(c -> c.call(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance())))
                .orTimeout(attemptTimeoutNanos, TimeUnit.NANOSECONDS)
                .whenComplete((f, e) -> {
                    if (e == null && !f.hasError() && f.getStatusResponse().getLeader() != 0) {
                        synchronized (this) {
                            probing = false;
                        }
                        answered(endpoint);
                    } else {
                        probeLater(failures + 1, endpoint);
                    }
                });
    }
}
