package io.rota.client.recipes;

import io.rota.client.Backoff;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Leader election (etcd's concurrency.Election): the same FIFO queue as {@link Lock} under
 * {@code <prefix>/<name>/} (default prefix {@code rota/election}). The contender with the lowest
 * create_revision leads; its value is the leader's announcement; the create_revision is the leader's
 * {@linkplain #epoch() epoch} and fencing token.
 *
 * <pre>{@code
 * Election election = Election.of(rota, "scheduler");
 * election.campaign("app-1:8080");          // blocks until elected
 * ... lead, passing election.epoch() to the resources ...
 * election.resign();
 * }</pre>
 *
 * <p>One object is one contender: one campaign at a time. {@link #leader()} and {@link #observe} work
 * without campaigning. Thread-safe.
 */
public final class Election {

    private final RotaClient rota;
    private final String name;
    private final LockOptions options;
    private final String queue;
    private final List<ElectionListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong wakeups = new AtomicLong();
    /** The current campaign's place, or null. */
    private volatile Contender contender;
    /** A campaign's join txn is on its way (no place yet): the monitor is not held across it. */
    private boolean joining;
    /** {@link #resign()} was called while {@link #joining}: the join's place is withdrawn once it is answered. */
    private boolean resignedWhileJoining;

    private Election(RotaClient rota, String name, LockOptions options) {
        this.rota = Objects.requireNonNull(rota, "rota");
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("an election needs a non-empty name");
        }
        this.name = name;
        this.options = Objects.requireNonNull(options, "options");
        this.queue = options.prefix() + "/" + name + "/";
    }

    /**
     * An election with prefix {@code rota/election} and the client's 10 s session lease.
     *
     * @param rota the client
     * @param name the election's name
     * @return the election
     */
    public static Election of(RotaClient rota, String name) {
        return of(rota, name, LockOptions.defaults().withPrefix("rota/election"));
    }

    /**
     * An election with the given options (prefix, TTL, clock drift, safety margin; the lock-delay is not used).
     * The prefix must not be the locks' default ({@code rota/lock}): an election named like a lock would
     * join that lock's queue, and a client holding the lock would then wait behind itself forever. Start
     * from {@code LockOptions.defaults().withPrefix("rota/election")}.
     *
     * @param rota    the client
     * @param name    the election's name
     * @param options the options
     * @return the election
     * @throws IllegalArgumentException if the options carry the locks' default prefix
     */
    public static Election of(RotaClient rota, String name, LockOptions options) {
        String lockPrefix = LockOptions.defaults().prefix();
        if (Objects.requireNonNull(options, "options").prefix().equals(lockPrefix)) {
            throw new IllegalArgumentException("election '" + name + "' would share the lock queue under '"
                    + lockPrefix + "/" + name + "/' with Lock.of(rota, \"" + name + "\"); give it its own prefix: "
                    + "options.withPrefix(\"rota/election\")");
        }
        return new Election(rota, name, options);
    }

    /** @return where this election's contenders queue: {@code <prefix>/<name>/} */
    String queuePrefix() {
        return queue;
    }

    /**
     * Registers a listener for this contender's gains and losses of leadership.
     *
     * @param listener the listener
     * @return this election
     */
    public Election addListener(ElectionListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    /**
     * Campaigns with {@code value} and blocks until elected.
     *
     * @param value the value to announce as leader
     * @return the leadership
     * @throws InterruptedException if interrupted (the campaign is withdrawn)
     * @throws LockLostException if the campaign's key or lease was lost, or {@link #resign()} was called
     *                           (from another thread) while it waited
     * @throws io.rota.client.RotaException if the cluster could not be reached, or the client was closed
     *                                      while it waited
     * @throws IllegalStateException if this object already campaigns
     */
    public Leader campaign(String value) throws InterruptedException {
        return campaign(value, Duration.ofNanos(Long.MAX_VALUE / 4)).orElseThrow();
    }

    /**
     * Campaigns with {@code value} for at most {@code timeout}.
     *
     * @param value   the value to announce as leader
     * @param timeout how long to wait at most
     * @return the leadership, or empty if not elected in time (the campaign is withdrawn)
     * @throws InterruptedException if interrupted (the campaign is withdrawn)
     * @throws LockLostException if the campaign's key or lease was lost, or {@link #resign()} was called
     *                           (from another thread) while it waited
     * @throws io.rota.client.RotaException if the cluster could not be reached, or the client was closed
     *                                      while it waited
     * @throws IllegalStateException if this object already campaigns
     */
    public Optional<Leader> campaign(String value, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            if (contender != null || joining) {
                throw new IllegalStateException("election '" + name + "' already campaigns"
                        + (contender != null ? " as " + contender.key() : "") + "; resign first");
            }
            joining = true;
            resignedWhileJoining = false;
        }
        // The join is a call of up to the client's timeout: not under the monitor, or resign() would wait for it
        // (issue 31). A resign meanwhile is remembered and carried out here, once the key is known.
        Contender c;
        boolean resigned;
        try {
            c = Contender.enter(rota, queue, value, options.ttl(), options::effectiveMargin, key -> List.of());
        } finally {
            synchronized (this) {
                joining = false;
                resigned = resignedWhileJoining;
            }
        }
        synchronized (this) {
            if (!resigned) {
                contender = c;
            }
        }
        if (resigned) {
            c.abandon();
            throw new LockLostException(c.key(), "resigned while the campaign was joining the queue");
        }
        boolean elected = false;
        try {
            if (!c.awaitFirst(deadline, wakeups, new AtomicLong())) {
                return Optional.empty();
            }
            c.watchTenure();
            c.onLost(this::lost);
            elected = true;
        } finally {
            if (!elected) {
                withdraw(c);
            }
        }
        Leader me = new Leader(name, c.key(), value, c.token(), c.token());
        for (ElectionListener l : listeners) {
            l.gained(me);
        }
        return Optional.of(me);
    }

    /**
     * Announces a new value while leading; the write is guarded by the own key, so a deposed leader's
     * proclaim does not apply.
     *
     * @param value the new value
     * @throws LockLostException if this contender does not lead (any more)
     */
    public void proclaim(String value) {
        Contender c = contender;
        if (c == null || !isLeader()) {
            throw new LockLostException(c == null ? queue : c.key(), "not the leader of '" + name + "'");
        }
        if (!c.guardedTxn().then(Op.put(c.key(), value, c.leaseId())).commit().succeeded()) {
            c.lose("key " + c.key() + " is gone");
            throw new LockLostException(c.key(), "the leader key is gone");
        }
    }

    /**
     * Gives up leadership (or the campaign): deletes the own key (the client's session lease lives on). A
     * {@link #campaign} waiting on another thread ends at once with a {@link LockLostException}; one whose join
     * is still on its way ends as soon as it is answered, withdrawing the key it put — resign never waits for
     * it. Idempotent.
     */
    public void resign() {
        Contender c;
        synchronized (this) {
            if (joining) {
                resignedWhileJoining = true;   // the campaign withdraws its key when its join is answered
            }
            c = contender;
            contender = null;
        }
        if (c != null) {
            c.retire();   // outside the monitor: a call that must not hold up another thread's campaign or resign
        }
    }

    /**
     * Whether this contender leads now: elected, not lost, safe-until not passed.
     *
     * @return true while leading
     */
    public boolean isLeader() {
        Contender c = contender;
        return c != null && c.hasTenure() && !c.isLost() && System.nanoTime() - c.safeUntilNanos() < 0;
    }

    /**
     * This contender's epoch while it leads: its key's create_revision, the fencing token of its term.
     *
     * @return the epoch, or 0 when not leading
     */
    public long epoch() {
        Contender c = contender;
        return c != null && isLeader() ? c.token() : 0;
    }

    /**
     * The current leader, read from the cluster (linearizable).
     *
     * @return the leader, or empty if nobody campaigns
     */
    public Optional<Leader> leader() {
        List<KeyValue> queued = Contender.contenders(rota.kv().getPrefix(queue), queue);
        return queued.isEmpty() ? Optional.empty() : Optional.of(leaderOf(queued.get(0)));
    }

    /**
     * Streams leader changes: {@code listener} gets the current leader now (empty if none), then every
     * change — a new leader, a proclaimed value, no leader — in revision order, on the client's callback
     * thread. If the watch ends with an error (it fell behind the server's history, COMPACTED, after a long
     * disconnection), the observer reads the election again and goes on from there, after the SDK's
     * {@link Backoff}, until it is closed; that read and what it delivers run on a thread of the observer's
     * own. Close the returned watch to stop.
     *
     * @param listener receives the leader after each change
     * @return the running observer; {@link Watch#isActive()} until closed
     */
    public Watch observe(Consumer<Optional<Leader>> listener) {
        Observer observer = new Observer(listener);
        observer.follow(rota.kv().getPrefix(queue));
        return observer;
    }

    /** Follows the queue from events; delivers the leader whenever its key or revision changes. */
    private final class Observer implements Watch, WatchListener {
        private final TreeMap<String, KeyValue> members = new TreeMap<>();
        private final Consumer<Optional<Leader>> listener;
        private Optional<Leader> last;
        /** The watch of the current stretch (a new one after each error). */
        private Watch watch;
        /** Errors since the last event: the {@link Backoff} before the next resumption. */
        private int failures;
        private boolean closed;

        Observer(Consumer<Optional<Leader>> listener) {
            this.listener = listener;
        }

        /** Starts a stretch from a read of the queue: delivers the leader it shows, then watches after it. */
        synchronized void follow(GetResult read) {
            if (closed) {
                return;
            }
            members.clear();
            for (KeyValue kv : Contender.contenders(read, queue)) {
                members.put(kv.keyString(), kv);
            }
            deliver();
            watch = rota.watches().watchPrefix(queue, read.revision() + 1, this);
        }

        @Override
        public synchronized void onEvent(WatchEvent event) {
            failures = 0;
            String key = event.kv().keyString();
            if (event.type() == WatchEvent.Type.DELETE) {
                members.remove(key);
            } else if (Contender.isContenderKey(key, queue)) {
                members.put(key, event.kv());
            }
            deliver();
        }

        @Override
        public void onError(RotaException error) {
            int attempt;
            synchronized (this) {
                watch = null;
                attempt = ++failures;
            }
            Timers.apart("rota-observe " + queue, () -> resume(attempt));
        }

        /** Reads the queue again after a backoff, until it succeeds or the observer or the client is closed. */
        private void resume(int attempt) {
            CompletableFuture<Void> clientClosed = rota.whenClosed();
            for (int n = attempt; ; n++) {
                try {
                    clientClosed.get(Backoff.delayMs(n), TimeUnit.MILLISECONDS);
                    return;   // the client was closed: nothing more can be observed
                } catch (TimeoutException e) {
                    // the backoff passed
                } catch (InterruptedException | ExecutionException e) {
                    return;
                }
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                }
                try {
                    follow(rota.kv().getPrefix(queue));
                    return;
                } catch (RotaException e) {
                    // unreachable for a whole call timeout: back off and read again
                }
            }
        }

        synchronized void deliver() {
            KeyValue first = null;
            for (KeyValue kv : members.values()) {
                if (first == null || kv.createRevision() < first.createRevision()) {
                    first = kv;
                }
            }
            Optional<Leader> now = first == null ? Optional.empty() : Optional.of(leaderOf(first));
            if (last == null || !last.equals(now)) {
                last = now;
                listener.accept(now);
            }
        }

        @Override
        public synchronized long nextRevision() {
            return watch == null ? 0 : watch.nextRevision();
        }

        @Override
        public synchronized String endpoint() {
            return watch == null ? null : watch.endpoint();
        }

        @Override
        public synchronized boolean isActive() {
            return !closed;
        }

        @Override
        public void close() {
            Watch current;
            synchronized (this) {
                closed = true;
                current = watch;
                watch = null;
            }
            if (current != null) {
                current.close();
            }
        }
    }

    private Leader leaderOf(KeyValue kv) {
        return new Leader(name, kv.keyString(), kv.valueString(), kv.createRevision(), kv.modRevision());
    }

    private void lost(String reason) {
        for (ElectionListener l : listeners) {
            l.lost(reason);
        }
    }

    private void withdraw(Contender c) {
        c.abandon();
        synchronized (this) {
            if (contender == c) {
                contender = null;
            }
        }
    }

    /** For humans: the election's name and queue prefix. */
    @Override
    public String toString() {
        return "Election[" + name + " at " + queue + "]";
    }
}
