package io.rota.client;

import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseLeasesRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseStatus;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The lease API. A lease has a TTL; keys put with it are deleted when it is revoked or expires, which it
 * does unless kept alive. {@link #keepAlive} keeps one alive in the background. Obtain it from
 * {@link RotaClient#leases()}; async forms fail with a {@link RotaException}, blocking forms throw it.
 *
 * <pre>{@code
 * Lease lease = rota.leases().grant(Duration.ofSeconds(5));
 * try (KeepAlive ka = rota.leases().keepAlive(lease.id(), (id, why) -> log.warn("lost " + id, why))) {
 *     rota.kv().put("workers/app-1", "alive", lease.id());
 *     ...
 * }
 * }</pre>
 */
public final class Leases {

    private static final Logger log = LoggerFactory.getLogger(Leases.class);

    private final Calls calls;
    private final ClientThreads threads;
    private final ConnectionStates states;
    private final ClientListener clientListener;
    private final Set<KeepAliveTask> running = ConcurrentHashMap.newKeySet();
    /** The shared session leases by TTL in seconds; a lost one is replaced on the next use. */
    private final Map<Long, SessionLease> sessions = new HashMap<>();

    Leases(Calls calls, ClientThreads threads, ConnectionStates states, ClientListener clientListener) {
        this.calls = calls;
        this.threads = threads;
        this.states = states;
        this.clientListener = clientListener;
    }

    /**
     * Grants a lease (applied once, retries included).
     *
     * @param ttl the TTL, rounded up to whole seconds (at least 1 s; the cluster may raise it further)
     * @return the lease with its id and granted TTL
     */
    public CompletableFuture<Lease> grantAsync(Duration ttl) {
        long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        return calls.execute(Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(seconds)),
                true).thenApply(f -> new Lease(f.getLeaseGrantResponse().getID(),
                        Duration.ofSeconds(f.getLeaseGrantResponse().getTTL())));
    }

    /**
     * Grants a lease and waits.
     *
     * @param ttl the TTL, rounded up to whole seconds (at least 1 s; the cluster may raise it further)
     * @return the lease with its id and granted TTL
     * @throws RotaException on failure
     */
    public Lease grant(Duration ttl) {
        return Errors.await(grantAsync(ttl));
    }

    /**
     * Revokes a lease, deleting its keys in one revision.
     *
     * @param id the lease
     * @return completes when revoked; fails with LEASE_NOT_FOUND if it does not exist
     */
    public CompletableFuture<Void> revokeAsync(long id) {
        return calls.execute(Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(id)),
                true).thenApply(f -> null);
    }

    /**
     * Revokes a lease, deleting its keys, and waits.
     *
     * @param id the lease
     * @throws RotaException on failure (LEASE_NOT_FOUND if it does not exist)
     */
    public void revoke(long id) {
        Errors.await(revokeAsync(id));
    }

    /**
     * Reads a lease's granted and remaining TTL (linearizable).
     *
     * @param id       the lease
     * @param withKeys also list the keys attached to it
     * @return the lease's state; fails with LEASE_NOT_FOUND if it does not exist
     */
    public CompletableFuture<LeaseTimeToLive> timeToLiveAsync(long id, boolean withKeys) {
        return calls.execute(Frame.newBuilder().setLeaseTimeToLiveRequest(
                LeaseTimeToLiveRequest.newBuilder().setID(id).setKeys(withKeys)), false)
                .thenApply(f -> {
                    LeaseTimeToLiveResponse r = f.getLeaseTimeToLiveResponse();
                    return new LeaseTimeToLive(r.getID(), Duration.ofSeconds(r.getGrantedTTL()),
                            Duration.ofSeconds(Math.max(0, r.getTTL())),
                            r.getKeysList().stream().map(k -> k.toString(StandardCharsets.UTF_8)).toList());
                });
    }

    /**
     * Reads a lease's granted and remaining TTL and waits.
     *
     * @param id       the lease
     * @param withKeys also list the keys attached to it
     * @return the lease's state
     * @throws RotaException on failure (LEASE_NOT_FOUND if it does not exist)
     */
    public LeaseTimeToLive timeToLive(long id, boolean withKeys) {
        return Errors.await(timeToLiveAsync(id, withKeys));
    }

    /**
     * Keeps a lease alive in the background: a keep-alive now, then every TTL/3, each through the
     * client's retrying call path on whatever member answers. The listener is told once if the cluster
     * reports the lease gone, or if no keep-alive succeeded for a whole TTL; the keep-alives then stop.
     *
     * @param id       the lease
     * @param listener told when the lease is lost
     * @return the handle; close it to stop
     */
    public KeepAlive keepAlive(long id, LeaseListener listener) {
        KeepAliveTask task = new KeepAliveTask(id, listener);
        running.add(task);
        task.send();
        return task;
    }

    /**
     * The client's session lease of this TTL, shared by every recipe of this client with that TTL: granted
     * on the first call (this call then waits for the grant), kept alive every TTL/3, and replaced by a
     * new grant on the first call after it was lost — or after it may have expired (no keep-alive confirmed
     * for a whole TTL, as after a long pause). It is not revoked when the client closes: its keys then
     * go when it expires, as when the process dies.
     *
     * @param ttl the TTL, rounded up to whole seconds (the cluster may raise it further)
     * @return the live session lease
     * @throws RotaException if a new lease was needed and could not be granted
     */
    public SessionLease session(Duration ttl) {
        long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        synchronized (sessions) {
            SessionLease current = sessions.get(seconds);
            if (current != null && !current.isLost()) {
                if (!current.mayHaveExpired(System.nanoTime())) {
                    return current;
                }
                // Paused past its TTL, or keep-alives unanswered that long: the cluster may have ended it and
                // granted its id again; a key put with it now could be another client's (issue 31).
                current.invalidate(new RotaException(RotaException.Code.LEASE_NOT_FOUND, "session lease "
                        + Long.toHexString(current.leaseId()) + " may have expired: no keep-alive confirmed for a"
                        + " whole TTL of " + current.ttl().toSeconds() + " s"));
            }
            long sentAt = System.nanoTime();
            Lease lease = grant(Duration.ofSeconds(seconds));
            SessionLease fresh = new SessionLease(lease, sentAt);
            fresh.keepAlive(keepAlive(lease.id(), (id, why) -> fresh.lose(why)));
            sessions.put(seconds, fresh);
            return fresh;
        }
    }

    /**
     * Lists the ids of every live lease (linearizable).
     *
     * @return the lease ids, ascending
     */
    public CompletableFuture<List<Long>> listAsync() {
        return calls.execute(Frame.newBuilder().setLeaseLeasesRequest(LeaseLeasesRequest.getDefaultInstance()), false)
                .thenApply(f -> f.getLeaseLeasesResponse().getLeasesList().stream().map(LeaseStatus::getID)
                        .sorted().toList());
    }

    /**
     * Lists the ids of every live lease and waits.
     *
     * @return the lease ids, ascending
     * @throws RotaException on failure
     */
    public List<Long> list() {
        return Errors.await(listAsync());
    }

    void closeAll() {
        for (KeepAliveTask t : running) {
            t.close();
        }
    }


    private final class KeepAliveTask implements KeepAlive {
        private final long id;
        private final LeaseListener listener;
        private final AtomicBoolean active = new AtomicBoolean(true);
        /** Unknown until the first answer: the first keep-alive may take the whole call timeout. */
        private volatile long ttlNanos;
        private volatile long lastSuccess = System.nanoTime();
        /** When the last keep-alive the cluster confirmed was sent; 0 until one was (see confirmed). */
        private volatile long confirmedSentAt;
        private volatile boolean confirmed;

        KeepAliveTask(long id, LeaseListener listener) {
            this.id = id;
            this.listener = listener;
        }

        void send() {
            if (!active.get()) {
                return;
            }
            long timeout = ttlNanos == 0 ? TimeUnit.SECONDS.toNanos(10)
                    : Math.max(TimeUnit.MILLISECONDS.toNanos(50), lastSuccess + ttlNanos - System.nanoTime());
            long sentAt = System.nanoTime();
            calls.execute(Frame.newBuilder().setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(id)),
                    false, timeout).whenComplete((f, e) -> {
                        if (!active.get()) {
                            return;
                        }
                        if (e == null) {
                            long ttl = f.getLeaseKeepAliveResponse().getTTL();
                            if (ttl <= 0) {
                                lost(new RotaException(RotaException.Code.LEASE_NOT_FOUND, "lease " + id + " is gone"));
                                return;
                            }
                            lastSuccess = System.nanoTime();
                            confirmedSentAt = sentAt;
                            confirmed = true;
                            ttlNanos = TimeUnit.SECONDS.toNanos(ttl);
                            threads.callback(() -> listener.onRenewed(id, Duration.ofSeconds(ttl)));
                            next(TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 3);
                            return;
                        }
                        RotaException r = Errors.of(e);
                        clientListener.keepAliveFailed(id, r);
                        if (r.code() == RotaException.Code.LEASE_NOT_FOUND || ttlNanos == 0
                                || System.nanoTime() - lastSuccess >= ttlNanos) {
                            lost(r);
                        } else {
                            next(Math.max(10, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 10));
                        }
                    });
        }

        private void next(long delayMs) {
            if (!threads.schedule(this::send, delayMs)) {
                close();
            }
        }

        private void lost(RotaException reason) {
            if (active.compareAndSet(true, false)) {
                running.remove(this);
                log.warn("lease {} lost: {}", Long.toHexString(id), reason.getMessage());
                states.leaseLost(id, reason);
                threads.callback(() -> listener.onLost(id, reason));
            }
        }

        @Override
        public long leaseId() {
            return id;
        }

        @Override
        public boolean isActive() {
            return active.get();
        }

        @Override
        public OptionalLong lastConfirmedSendNanos() {
            return confirmed ? OptionalLong.of(confirmedSentAt) : OptionalLong.empty();
        }

        @Override
        public void close() {
            active.set(false);
            running.remove(this);
        }
    }
}
