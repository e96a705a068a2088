package io.rota.client.recipes;

import io.rota.client.GetResult;
import io.rota.client.KeepAlive;
import io.rota.client.KeyValue;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;

import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Watches a key held under a kept-alive lease for its loss — the key deleted or overwritten by someone else,
 * or safe-until passed — and knows safe-until: the send time of the last confirmed keep-alive (or of the
 * grant) + TTL − margin. Shared by {@link Contender} (a holder's or leader's key) and {@link OnceRecord} (a
 * claim). The keep-alive's own loss is reported by its owner.
 *
 * <p>The watch resumes from the last revision it delivered. When that is older than the server's history
 * (more than 10,000 other writes went by, then a reconnect), the watch ends COMPACTED; the key is then read
 * again: still there and still {@code ours} means still held, and the watch restarts after the read. A watch
 * that ends for any other reason (a member stopping, a watch limit) is not a loss either: the key is read again
 * and watched anew after a backoff; only the key's deletion, an overwrite, safe-until or the client's close is
 * a loss.
 */
final class Tenure {

    private final RotaClient rota;
    private final String key;
    private final KeepAlive keepAlive;
    /** When the grant was sent: the lease cannot expire before this + TTL, until a keep-alive is confirmed. */
    private final long grantSentAt;
    private final long ttlNanos;
    private final long marginNanos;
    private Predicate<KeyValue> ours;
    private Consumer<String> lose;
    private Watch watch;
    private ScheduledFuture<?> timer;
    private boolean stopped;
    /** Watches (or reads) in a row that ended without an event: the retry backoff grows with them. */
    private volatile int failures;

    Tenure(RotaClient rota, String key, KeepAlive keepAlive, long grantSentAt, long ttlNanos, long marginNanos) {
        this.rota = rota;
        this.key = key;
        this.keepAlive = keepAlive;
        this.grantSentAt = grantSentAt;
        this.ttlNanos = ttlNanos;
        this.marginNanos = marginNanos;
    }

    /** Until when (on {@link System#nanoTime}) the lease cannot have expired. */
    long safeUntilNanos() {
        long base = keepAlive.lastConfirmedSendNanos().orElse(grantSentAt);
        if (base - grantSentAt < 0) {
            base = grantSentAt;
        }
        return base + ttlNanos - marginNanos;
    }

    /**
     * Starts watching: the key from {@code fromRevision}, and the safe-until deadline.
     *
     * @param ours whether the key as found (an event's or a read's) is still the holder's
     * @param lose told the reason when the key is lost; it may be told more than once, so it must be idempotent
     */
    synchronized void start(long fromRevision, Predicate<KeyValue> ours, Consumer<String> lose) {
        if (stopped) {
            return;
        }
        this.ours = ours;
        this.lose = lose;
        watchFrom(fromRevision);
        scheduleSafeUntilCheck();
    }

    /** Stops the watch and the timer; idempotent. Nothing is reported after it returns (except what is running). */
    synchronized void stop() {
        stopped = true;
        if (watch != null) {
            watch.close();
            watch = null;
        }
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private synchronized void watchFrom(long revision) {
        if (stopped) {
            return;
        }
        watch = rota.watches().watch(key, revision, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                failures = 0;
                if (event.type() == WatchEvent.Type.DELETE) {
                    lose.accept("key " + key + " was deleted at revision " + event.revision()
                            + " (lease revoked or expired, or deleted by someone else)");
                } else if (!ours.test(event.kv())) {
                    lose.accept("key " + key + " was overwritten by someone else at revision " + event.revision());
                }
            }

            @Override
            public void onError(RotaException error) {
                if (error.code() == RotaException.Code.COMPACTED) {
                    recheck();
                } else if (rota.whenClosed().isDone()) {
                    lose.accept("the watch on " + key + " ended: " + error.getMessage());
                } else {
                    // A watch that ends is not a key that is lost (issue 31): a member stopping, a watch limit, a
                    // slow watcher. Read the key again and watch anew, after a backoff while it keeps failing;
                    // if the cluster stays out of reach, the safe-until timer decides.
                    failures++;
                    Timers.at(System.nanoTime() + retryDelayNanos(failures),
                            () -> Timers.apart("rota-tenure " + key, Tenure.this::recheck));
                }
            }
        });
    }

    /** How long to wait before watching again after {@code failures} watches in a row ended: 100 ms doubling to 2 s. */
    static long retryDelayNanos(int failures) {
        return Math.min(2_000_000_000L, 100_000_000L << Math.min(Math.max(failures - 1, 0), 5));
    }

    /**
     * After the watch ended (on the client's callback thread or one of its own, which may block): is the key
     * still ours? If it cannot be read now, it is read again later; the safe-until timer is the deadline.
     */
    private void recheck() {
        synchronized (this) {
            if (stopped) {
                return;
            }
        }
        GetResult read;
        try {
            read = rota.kv().get(key);
        } catch (RotaException e) {
            if (rota.whenClosed().isDone()) {
                lose.accept("the watch on " + key + " ended and the client was closed: " + e.getMessage());
                return;
            }
            failures++;
            Timers.at(System.nanoTime() + retryDelayNanos(failures),
                    () -> Timers.apart("rota-tenure " + key, this::recheck));
            return;
        }
        Optional<KeyValue> now = read.first();
        if (now.isEmpty()) {
            lose.accept("key " + key + " is gone (found when its watch fell behind the history)");
        } else if (!ours.test(now.get())) {
            lose.accept("key " + key + " was overwritten by someone else (found when its watch fell behind the history)");
        } else {
            watchFrom(read.revision() + 1);   // a change after the read is replayed
        }
    }

    private synchronized void scheduleSafeUntilCheck() {
        if (stopped) {
            return;
        }
        timer = Timers.at(safeUntilNanos(), () -> {
            if (System.nanoTime() - safeUntilNanos() >= 0) {
                lose.accept("safe-until passed: no keep-alive of lease " + Long.toHexString(keepAlive.leaseId())
                        + " was confirmed in time, so the lease may expire");
            } else {
                scheduleSafeUntilCheck();
            }
        });
    }
}
