package io.rota.server.api;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftException;
import io.rota.server.cluster.ClusterView;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one propose-or-forward-or-retry policy of a call that must reach the leader (a write, an auth change, a
 * membership request): proposed here when this member leads, else forwarded to the leader's client port; an
 * attempt that was definitely not applied — no leader known yet, the leader unreachable, NOT_LEADER, BUSY — is
 * tried again every {@code retryInterval} until the call's deadline. A forwarded frame is never retried or
 * forwarded again: its sender retries. Every time-based decision reads {@code clock} and runs on {@code timer}.
 */
final class RoutePolicy {

    /**
     * What one attempt of a call came to: {@link #done} with the answer, or {@link #retry} — not applied,
     * worth trying again after one tick — with the error the caller gets if the deadline passes first.
     */
    record Attempt(Frame answer, Error retry) {
        static Attempt done(Frame answer) {
            return new Attempt(answer, null);
        }

        static Attempt retry(Error error) {
            return new Attempt(null, error);
        }

        boolean isDone() {
            return answer != null;
        }
    }

    private final ClusterView view;
    private final Forwarder forwarder;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final Duration retryInterval;

    RoutePolicy(ClusterView view, Forwarder forwarder, ScheduledExecutorService timer, Clock clock,
                ServerMetrics metrics, Duration retryInterval) {
        this.view = view;
        this.forwarder = forwarder;
        this.timer = timer;
        this.clock = clock;
        this.metrics = metrics;
        this.retryInterval = retryInterval;
    }

    /** {@code propose} if this member leads, else {@code request} forwarded to the leader. */
    CompletableFuture<Attempt> onLeader(Frame request, long deadline, Supplier<CompletableFuture<Attempt>> propose) {
        return view.isLeader() ? propose.get() : forward(request, deadline);
    }

    /**
     * What a proposal made on the leader came to: its answer; a retry if it was definitely not applied (or
     * {@code passesWithTime} says waiting mends it), unless {@code request} was forwarded to us; else the error.
     * {@code counted}: the outcome counts in the proposals metrics (writes do).
     */
    <T> CompletableFuture<Attempt> settled(Frame request, CompletableFuture<T> proposal, Function<T, Frame> answer,
                                           Predicate<Throwable> passesWithTime, boolean counted) {
        return proposal.handle((result, e) -> {
            if (e == null) {
                if (counted) {
                    metrics.proposalsOk.increment();
                }
                return Attempt.done(answer.apply(result));
            }
            if (!request.getForwarded() && (definitelyNotApplied(e) || passesWithTime.test(Errors.unwrap(e)))) {
                return Attempt.retry(Errors.of(e, view));
            }
            if (counted) {
                metrics.proposalsFailed.increment();
            }
            return Attempt.done(Frames.error(0, Errors.of(e, view)));
        });
    }

    /** On a follower: send the request to the leader's client port (not twice: a forwarded frame is answered). */
    private CompletableFuture<Attempt> forward(Frame request, long deadline) {
        if (request.getForwarded()) {
            return done(Frames.error(0, Errors.notLeader("member " + view.memberId()
                    + " is not the leader (the forwarding member's view was stale); retry", view)));
        }
        long leader = view.leaderId();
        if (leader == RaftNode.NONE) {
            return retry(Frames.error(Error.Code.UNAVAILABLE,
                    "no leader is known; the cluster may be electing one or may have lost its majority").toBuilder()
                    .setReason(Error.Reason.NO_LEADER).build());
        }
        String address = view.clientAddress(leader).orElse(null);
        if (address == null) {
            return retry(Frames.error(Error.Code.UNAVAILABLE,
                    "the leader (member " + leader + ") has not published its client address yet"));
        }
        metrics.forwarded.increment();
        return forwarder.forward(address, request, remaining(deadline)).handle((answer, e) -> {
            if (e == null && !(answer.hasError() && answer.getError().getCode() == Error.Code.NOT_LEADER)) {
                return Attempt.done(answer);
            }
            if (e == null || Errors.unwrap(e) instanceof Forwarder.Unreachable) {
                return Attempt.retry(e == null ? answer.getError() : Errors.of(e, view));
            }
            return Attempt.done(Frames.error(0, Errors.of(e, view)));
        });
    }

    /**
     * Run {@code attempt}; while it asks for a {@linkplain Attempt#retry retry}, run it again after one tick,
     * until the deadline. Past it the caller gets the last attempt's error (with a retry-after, see
     * {@link Errors#gaveUp}).
     */
    CompletableFuture<Frame> retrying(long deadline, Supplier<CompletableFuture<Attempt>> attempt) {
        CompletableFuture<Frame> out = new CompletableFuture<>();
        run(deadline, attempt, out);
        return out;
    }

    private void run(long deadline, Supplier<CompletableFuture<Attempt>> attempt, CompletableFuture<Frame> out) {
        attempt.get().whenComplete((a, e) -> {
            if (e != null) {
                out.complete(Frames.error(0, Errors.of(e, view)));
            } else if (a.isDone()) {
                out.complete(a.answer());
            } else if (clock.nanoTime() + retryInterval.toNanos() - deadline < 0) {
                timer.schedule(() -> run(deadline, attempt, out), retryInterval.toMillis(), TimeUnit.MILLISECONDS);
            } else {
                out.complete(Frames.error(0, Errors.gaveUp(a.retry(), retryInterval)));
            }
        });
    }

    static CompletableFuture<Attempt> done(Frame answer) {
        return CompletableFuture.completedFuture(Attempt.done(answer));
    }

    private static CompletableFuture<Attempt> retry(Error error) {
        return CompletableFuture.completedFuture(Attempt.retry(error));
    }

    /** NOT_LEADER (this member does not lead, or a new leader overwrote the entry) and BUSY: not applied. */
    private static boolean definitelyNotApplied(Throwable e) {
        return Errors.isRaft(e, RaftException.Code.NOT_LEADER) || Errors.isRaft(e, RaftException.Code.BUSY);
    }

    /** The time left until {@code deadline}, at least a nanosecond. */
    Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - clock.nanoTime()));
    }
}
