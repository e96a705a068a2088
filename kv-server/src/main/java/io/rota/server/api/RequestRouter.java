package io.rota.server.api;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.ResponseHeader;
import io.rota.proto.StatusResponse;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.node.RaftException;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.lease.LogClock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Where each client call goes. Never touches Raft state: it calls the driver's async API and the
 * futures it returns complete on the driver thread (nothing here blocks).
 * <ul>
 *   <li>Writes: on the leader, a {@link Command} (session from the frame, stamped with how long this
 *       member has led — see {@link LogClock}) is proposed; a lease grant's TTL is raised to the minimum
 *       here, so the log carries the TTL every replica applies; on a follower the frame is forwarded to the leader's published client address (etcd
 *       forwards proposals the same way). While no leader is known, or when the write was definitely not
 *       applied (NOT_LEADER: a new leader overwrote it), it is retried every tick until the deadline — so a
 *       client sees NOT_LEADER only from a member that was itself forwarded to.</li>
 *   <li>Reads: linearizable through ReadIndex (§6.4) on any member, or serializable from local state.</li>
 * </ul>
 * Every answer carries the header: the state machine's revision, this member's term and id.
 */
public final class RequestRouter {

    private final RaftDriver<CommandResult> driver;
    private final CoordinationStateMachine stateMachine;
    private final ClusterView view;
    private final Forwarder forwarder;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final Duration timeout;
    private final Duration retryInterval;
    private final Duration readAttemptTimeout;
    private final long minLeaseTtlSeconds;
    private final String version;

    /** An attempt that may be repeated: {@code answer} is what the caller gets if the deadline passes. */
    private static final class RetryLater extends RuntimeException {
        private final transient Error answer;

        RetryLater(Error answer) {
            super(answer.getMessage(), null, false, false);
            this.answer = answer;
        }
    }

    /** Every time-based decision reads {@code clock} and runs on {@code timer}: the simulator injects both. */
    public RequestRouter(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, ClusterView view,
                         Forwarder forwarder, ScheduledExecutorService timer, Clock clock, ServerMetrics metrics,
                         ClientServer.Settings settings) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.forwarder = forwarder;
        this.timer = timer;
        this.clock = clock;
        this.metrics = metrics;
        this.timeout = settings.requestTimeout();
        this.retryInterval = settings.retryInterval();
        this.readAttemptTimeout = settings.readAttemptTimeout();
        this.minLeaseTtlSeconds = settings.minLeaseTtlSeconds();
        this.version = settings.version();
    }

    /** Answer {@code request} (write, read or status); the answer echoes its call id. */
    public CompletableFuture<Frame> handle(Frame request) {
        long deadline = clock.nanoTime() + timeout.toNanos();
        CompletableFuture<Frame> answer;
        if (Frames.isWrite(request)) {
            answer = retrying(deadline, () -> write(request, deadline));
            if (!request.getForwarded()) {
                long start = clock.nanoTime();
                answer = answer.whenComplete((f, e) -> {
                    if (e == null && !f.hasError()) {
                        long now = clock.nanoTime();
                        metrics.writes.record(now, now - start);
                    }
                });
            }
        } else {
            answer = switch (request.getBodyCase()) {
                case RANGE_REQUEST -> retrying(deadline, () -> range(request.getRangeRequest(), deadline));
                case LEASE_TIME_TO_LIVE_REQUEST -> retrying(deadline, () -> read(() -> Frame.newBuilder()
                        .setLeaseTimeToLiveResponse(stateMachine.timeToLive(request.getLeaseTimeToLiveRequest()))
                        .build(), deadline));
                case LEASE_LEASES_REQUEST -> retrying(deadline, () -> read(() -> Frame.newBuilder()
                        .setLeaseLeasesResponse(stateMachine.leases()).build(), deadline));
                case STATUS_REQUEST -> status();
                default -> CompletableFuture.completedFuture(Frames.error(0, Frames.error(Error.Code.INVALID_ARGUMENT,
                        "not a request this server answers: " + request.getBodyCase())));
            };
        }
        long callId = request.getCallId();
        return answer.thenApply(f -> Frames.withHeader(f, view.term(), view.memberId()).toBuilder()
                .setCallId(callId).build());
    }

    private CompletableFuture<Frame> write(Frame request, long deadline) {
        if (view.isLeader()) {
            if (request.hasPublishMemberRequest() && !inConfiguration(request.getPublishMemberRequest().getMember().getId())) {
                return CompletableFuture.completedFuture(Frames.error(0, Frames.error(Error.Code.INVALID_ARGUMENT,
                        "member id " + request.getPublishMemberRequest().getMember().getId() + " is not in the"
                                + " cluster's configuration; only members publish their addresses")));
            }
            return driver.propose(command(request).toByteArray(), remaining(deadline)).handle((result, e) -> {
                if (e == null) {
                    metrics.proposalsOk.increment();
                    return Frames.response(result);
                }
                if (!request.getForwarded() && definitelyNotApplied(e)) {
                    throw new RetryLater(Errors.of(e, view));
                }
                metrics.proposalsFailed.increment();
                return Frames.error(0, Errors.of(e, view));
            });
        }
        if (request.getForwarded()) {
            return CompletableFuture.completedFuture(Frames.error(0, Errors.notLeader("member " + view.memberId()
                    + " is not the leader (the forwarding member's view was stale); retry", view)));
        }
        long leader = view.leaderId();
        if (leader == RaftNode.NONE) {
            return CompletableFuture.failedFuture(new RetryLater(Frames.error(Error.Code.UNAVAILABLE,
                    "no leader is known; the cluster may be electing one or may have lost its majority")));
        }
        String address = view.clientAddress(leader).orElse(null);
        if (address == null) {
            return CompletableFuture.failedFuture(new RetryLater(Frames.error(Error.Code.UNAVAILABLE,
                    "the leader (member " + leader + ") has not published its client address yet")));
        }
        metrics.forwarded.increment();
        return forwarder.forward(address, request, remaining(deadline)).handle((answer, e) -> {
            if (e == null && !(answer.hasError() && answer.getError().getCode() == Error.Code.NOT_LEADER)) {
                return answer;
            }
            if (e == null || unwrap(e) instanceof Forwarder.Unreachable) {
                throw new RetryLater(e == null ? answer.getError() : Errors.of(e, view));
            }
            return Frames.error(0, Errors.of(e, view));
        });
    }

    /** The command to propose, stamped now (a retry stamps anew: it may be proposed in another term). */
    private Command command(Frame request) {
        Command command = Frames.command(request, LogClock.stamp(driver.leadership(), clock.nanoTime()));
        if (!command.hasLeaseGrant()) {
            return command;
        }
        long ttl = command.getLeaseGrant().getTTL();
        if (ttl < 0 || ttl >= minLeaseTtlSeconds) {
            return command;   // a negative TTL is refused at apply, with the state machine's message
        }
        LeaseGrantRequest raised = command.getLeaseGrant().toBuilder().setTTL(minLeaseTtlSeconds).build();
        return command.toBuilder().setLeaseGrant(raised).build();
    }

    private CompletableFuture<Frame> range(RangeRequest request, long deadline) {
        Supplier<Frame> query = () -> Frame.newBuilder().setRangeResponse(stateMachine.range(request)).build();
        if (request.getSerializable()) {
            return countRead(driver.readLocal(query));
        }
        return read(query, deadline);
    }

    /**
     * A linearizable read (§6.4). Reads change nothing, so any failure short of the deadline is retried —
     * also a TIMEOUT: a follower's ReadIndex request to a leader that just died is never answered, and the
     * next attempt goes to the new leader. Each attempt is bounded by {@code readAttemptTimeout}.
     */
    private CompletableFuture<Frame> read(Supplier<Frame> query, long deadline) {
        Duration attempt = Duration.ofNanos(Math.min(readAttemptTimeout.toNanos(), remaining(deadline).toNanos()));
        return countRead(driver.read(query, attempt)).handle((frame, e) -> {
            if (e == null) {
                return frame;
            }
            if (unwrap(e) instanceof RaftException) {
                throw new RetryLater(Errors.of(e, view));
            }
            return Frames.error(0, Errors.of(e, view));
        });
    }

    private CompletableFuture<Frame> countRead(CompletableFuture<Frame> read) {
        return read.whenComplete((f, e) -> (e == null ? metrics.readsOk : metrics.readsFailed).increment());
    }

    private CompletableFuture<Frame> status() {
        CompletableFuture<Long> revision = driver.readLocal(stateMachine::revision);
        return driver.status().thenCombine(revision, (s, rev) -> {
            StatusResponse.Builder b = StatusResponse.newBuilder()
                    .setHeader(ResponseHeader.newBuilder().setRevision(rev))
                    .setVersion(version).setLeader(s.leaderId()).setRaftIndex(s.commitIndex())
                    .setRaftTerm(s.term()).setRaftAppliedIndex(s.appliedIndex())
                    .addAllMembers(view.members().values());
            if (s.leaderId() == RaftNode.NONE) {
                b.addErrors("no leader is known");
            }
            return Frame.newBuilder().setStatusResponse(b).build();
        }).exceptionally(e -> Frames.error(0, Errors.of(e, view)));
    }

    /** Run {@code attempt}; on {@link RetryLater} run it again after one tick, until the deadline. */
    private CompletableFuture<Frame> retrying(long deadline, Supplier<CompletableFuture<Frame>> attempt) {
        CompletableFuture<Frame> out = new CompletableFuture<>();
        run(deadline, attempt, out);
        return out;
    }

    private void run(long deadline, Supplier<CompletableFuture<Frame>> attempt, CompletableFuture<Frame> out) {
        attempt.get().whenComplete((frame, e) -> {
            if (e == null) {
                out.complete(frame);
            } else if (unwrap(e) instanceof RetryLater retry) {
                if (clock.nanoTime() + retryInterval.toNanos() - deadline < 0) {
                    timer.schedule(() -> run(deadline, attempt, out), retryInterval.toMillis(), TimeUnit.MILLISECONDS);
                } else {
                    out.complete(Frames.error(0, retry.answer));
                }
            } else {
                out.complete(Frames.error(0, Errors.of(e, view)));
            }
        });
    }

    /**
     * Whether {@code id} is this leader or one of the followers it replicates to. Checked before a
     * PublishMember is proposed, so the replicated member table holds configured members only: the call is
     * internal but reachable from the client port, and every other id would add an entry for good.
     */
    private boolean inConfiguration(long id) {
        return id == view.memberId() || (view.status() != null && view.status().progress().containsKey(id));
    }

    /** NOT_LEADER (this member does not lead, or a new leader overwrote the entry) and BUSY: not applied. */
    private static boolean definitelyNotApplied(Throwable e) {
        return isCode(e, RaftException.Code.NOT_LEADER) || isCode(e, RaftException.Code.BUSY);
    }

    private static boolean isCode(Throwable e, RaftException.Code code) {
        return unwrap(e) instanceof RaftException re && re.code() == code;
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    private Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - clock.nanoTime()));
    }
}
