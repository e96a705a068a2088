package io.rota.server.api;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthRequest;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisteredMember;
import io.rota.proto.ResponseHeader;
import io.rota.proto.StatusResponse;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.Clock;
import io.rota.raft.node.ConfChangeRefusedException;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.node.RaftException;
import io.rota.raft.transport.LogLimiter;
import io.rota.server.api.RoutePolicy.Attempt;
import io.rota.server.authgate.AuthGate;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.Admission;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.UserQuotas;
import io.rota.server.lease.LogClock;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
 *       client sees NOT_LEADER only from a member that was itself forwarded to. Writes, auth changes and
 *       membership requests share that one policy, {@link RoutePolicy}.</li>
 *   <li>Reads: linearizable through ReadIndex (§6.4) on any member, or serializable from local state.</li>
 *   <li>Auth calls: changes are proposed by the leader as an AuthCommand (passwords hashed first, see
 *       {@link AuthGate#command}); reads of users, roles and status are linearizable reads.</li>
 * </ul>
 * Every answer carries the header: the state machine's revision, this member's term and id.
 */
public final class RequestRouter {

    /** A request the routing threw on: a bug, but one a client can repeat at will, so its lines are bounded. */
    private static final LogLimiter bugs = new LogLimiter(LoggerFactory.getLogger(RequestRouter.class), 5);

    private final RaftDriver<CommandResult> driver;
    private final CoordinationStateMachine stateMachine;
    private final ClusterView view;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final Duration timeout;
    private final Duration readAttemptTimeout;
    private final long minLeaseTtlSeconds;
    private final UserQuotas userQuotas;
    private final String version;
    private final MembershipRequests membership;
    /** Propose here, forward to the leader, or retry until the deadline: one policy for every call that proposes. */
    private final RoutePolicy policy;
    /** Backups (issue 18): set once by the server as it starts; until then, and in the simulator, refused. */
    private volatile SnapshotStream snapshots;

    private final AuthGate gate;
    /** 128 bits: a session's secret is what keeps a session id, which is no secret, from being used by another. */
    private static final int SESSION_SECRET_BYTES = 16;
    private final SecureRandom random = new SecureRandom();

    /** Every time-based decision reads {@code clock} and runs on {@code timer}: the simulator injects both. */
    public RequestRouter(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, ClusterView view,
                         Forwarder forwarder, ScheduledExecutorService timer, Clock clock, ServerMetrics metrics,
                         ClientServer.Settings settings) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.clock = clock;
        this.metrics = metrics;
        this.timeout = settings.requestTimeout();
        this.readAttemptTimeout = settings.readAttemptTimeout();
        this.minLeaseTtlSeconds = settings.minLeaseTtlSeconds();
        this.userQuotas = settings.userQuotas();
        this.version = settings.version();
        this.membership = new MembershipRequests(driver, stateMachine, view, timer, clock, settings.retryInterval());
        this.policy = new RoutePolicy(view, forwarder, timer, clock, metrics, settings.retryInterval());
        this.gate = new AuthGate(stateMachine.auth(), () -> TimeUnit.NANOSECONDS.toMillis(clock.nanoTime()));
    }

    /**
     * The cluster's id and the members of this member's --initial-cluster (id → name and peer address):
     * membership answers carry the id (a new member starts with it, issue 32) and use the members for those
     * that have not published yet, so `member add` right after start names every peer address.
     */
    public void knowFromConfiguration(String clusterId, Map<Long, RegisteredMember> initialCluster) {
        membership.knowFromConfiguration(clusterId, initialCluster);
    }

    /** Who may do what on this member (the client handler asks it before routing a request). */
    public AuthGate gate() {
        return gate;
    }

    /**
     * Who a request is proposed as (issue 33, as etcd's AuthInfo): the caller sessions and leases belong to, and
     * the auth revision the door checked it against ({@link #NO_REVISION} for this member's own requests, which
     * apply does not check).
     */
    private record Who(String caller, long authRevision) {
        /** This member's own request (its publication, a forced retirement): applied unchecked, as internal. */
        static final Who MEMBER = new Who("", NO_REVISION);
    }

    /** No auth revision: the member's own request. */
    private static final long NO_REVISION = -1;

    /**
     * Answer this member's own request (its publication): with a root token while auth is enabled, so a member
     * it is forwarded to checks it as root's, and proposed here with no caller, as the members' internal commands.
     */
    public CompletableFuture<Frame> handleInternal(Frame request) {
        String token = gate.memberToken();
        return answer(token.isEmpty() ? request : request.toBuilder().setAuthToken(token).build(), Who.MEMBER);
    }

    /**
     * Answer a request the {@link AuthGate} let through for {@code user} (null while auth is disabled), checked
     * against auth revision {@code authRevision} — the {@link AuthGate#applied} state the door took before it
     * checked (never newer than what it checked, so apply's comparison is safe). Apply checks it again.
     */
    public CompletableFuture<Frame> handle(Frame request, String user, long authRevision) {
        Who who = new Who(CoordinationStateMachine.caller(user), authRevision);
        if (user != null && request.hasLeaseTimeToLiveRequest() && request.getLeaseTimeToLiveRequest().getKeys()) {
            // The keys of a lease are names in the key space: listed only if the user may read every one.
            return answer(request, who).thenApply(f -> {
                Error denied = f.hasLeaseTimeToLiveResponse()
                        ? gate.mayList(user, f.getLeaseTimeToLiveResponse().getKeysList()) : null;
                return denied == null ? f : Frames.error(f.getCallId(), denied);
            });
        }
        // A lease revoke is authorised at apply (issue 33): the lease's owner, and WRITE on every key it holds.
        return answer(request, who);
    }

    /**
     * Answer {@code request} (write, read or status) as an anonymous caller checked against the auth state this
     * member has applied now: auth disabled (issue 31). Every door comes to {@link #answer} (the client port,
     * the etcd door, a forwarded frame), so that is where a well-formed request that the routing throws on is
     * still answered (issue 30): an internal error, logged as a bug, never a closed connection. Were auth enabled
     * meanwhile, apply refuses the write (issue 33).
     */
    public CompletableFuture<Frame> handle(Frame request) {
        return handle(request, null, gate.applied().revision());
    }

    private CompletableFuture<Frame> answer(Frame request, Who who) {
        try {
            return route(request, who);
        } catch (RuntimeException e) {
            bugs.warn("BUG: a {} could not be handled ({} at {}); answered as an internal error",
                    request.getBodyCase(), e, e.getStackTrace().length > 0 ? e.getStackTrace()[0] : "?");
            return CompletableFuture.completedFuture(Frames.error(request.getCallId(), Errors.internal(e)));
        }
    }

    private CompletableFuture<Frame> route(Frame request, Who who) {
        long deadline = clock.nanoTime() + timeout.toNanos();
        String caller = who.caller();
        CompletableFuture<Frame> answer;
        if (request.hasAuthRequest()) {
            answer = policy.retrying(deadline, () -> auth(request, who, deadline));
        } else if (MembershipRequests.isMembership(request)) {
            answer = policy.retrying(deadline, () -> leaderOnly(request, who, deadline));
        } else if (Frames.isWrite(request)) {
            answer = policy.retrying(deadline, () -> write(request, who, deadline));
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
                case RANGE_REQUEST -> policy.retrying(deadline, () -> range(request.getRangeRequest(), deadline));
                case LEASE_TIME_TO_LIVE_REQUEST -> policy.retrying(deadline, () -> read(() -> Frame.newBuilder()
                        .setLeaseTimeToLiveResponse(stateMachine.timeToLive(request.getLeaseTimeToLiveRequest(), caller))
                        .build(), deadline));
                // Issue 33: while auth is enabled a user sees its own leases only (root all of them).
                case LEASE_LEASES_REQUEST -> policy.retrying(deadline, () -> read(() -> Frame.newBuilder()
                        .setLeaseLeasesResponse(stateMachine.leases(caller)).build(), deadline));
                case STATUS_REQUEST -> status();
                case ALARM_REQUEST -> alarmList(request, deadline);
                // This member's own applied state, as etcd's HashKV: comparing members is the point.
                case HASH_KV_REQUEST -> driver.readLocal(() -> Frame.newBuilder()
                        .setHashKvResponse(stateMachine.hashKv(request.getHashKvRequest())).build())
                        .exceptionally(e -> Frames.error(0, Errors.of(e, view)));
                default -> CompletableFuture.completedFuture(Frames.error(0, Frames.error(Error.Code.INVALID_ARGUMENT,
                        "not a request this server answers: " + request.getBodyCase())));
            };
        }
        long callId = request.getCallId();
        return answer.thenApply(f -> {
            Frame.Builder b = Frames.withHeader(f, view.term(), view.memberId()).toBuilder().setCallId(callId);
            // Not the leader: name it, so the client sends its next calls there instead of through us.
            long leader = view.leaderId();
            if (!view.isLeader() && leader != 0) {
                view.clientAddress(leader).ifPresent(b::setLeaderHint);
            }
            return b.build();
        });
    }

    // ---- backups, quota and compaction (issue 18) -----------------------------------------------------

    /** Serve SnapshotRequests with {@code stream}. */
    public void serveSnapshots(SnapshotStream stream) {
        this.snapshots = stream;
    }

    /** A SnapshotRequest: streamed by this member (never forwarded: a backup is of the member asked). */
    void snapshot(io.netty.channel.Channel channel, long callId) {
        SnapshotStream stream = snapshots;
        if (stream == null) {
            channel.writeAndFlush(Frames.error(callId, NO_SNAPSHOTS));
            return;
        }
        stream.stream(channel, callId);
    }

    /** A snapshot of this member streamed to {@code sink} (etcd's Maintenance.Snapshot, from the etcd port). */
    public void snapshot(SnapshotStream.Sink sink) {
        SnapshotStream stream = snapshots;
        if (stream == null) {
            sink.fail(NO_SNAPSHOTS);
            return;
        }
        stream.stream(sink);
    }

    private static final Error NO_SNAPSHOTS = Frames.error(Error.Code.INVALID_ARGUMENT,
            "this member does not serve snapshots");

    /**
     * AlarmRequest GET: the armed alarms at a linearizable point. ACTIVATE is refused: members raise alarms
     * (the leader's quota check), an operator only lists and disarms them. DEACTIVATE is a write.
     */
    private CompletableFuture<Frame> alarmList(Frame request, long deadline) {
        if (request.getAlarmRequest().getAction() != io.rota.proto.AlarmRequest.AlarmAction.GET) {
            return CompletableFuture.completedFuture(Frames.error(0, Frames.error(Error.Code.INVALID_ARGUMENT,
                    "alarms are raised by the members (the space quota); a client lists (GET) or disarms them")));
        }
        return policy.retrying(deadline, () -> read(() -> Frame.newBuilder().setAlarmResponse(stateMachine.alarms())
                .build(), deadline));
    }

    /**
     * A membership request (issue 13): carried out here if this member leads, else forwarded to the leader
     * like a write. Not applied (NOT_LEADER, BUSY) and refusals that pass with time (a change in progress,
     * a new leader's first commit, a transfer) are retried until the deadline; LEARNER_BEHIND and
     * LEARNER_NOT_RESPONDING are answered at once, since catching up or starting may take longer than a
     * request (the answer says to retry), and so is QUORUM_AT_RISK, which waiting does not mend.
     */
    private CompletableFuture<Attempt> leaderOnly(Frame request, Who who, long deadline) {
        return policy.onLeader(request, deadline, () -> policy.settled(request,
                membership.handle(request, command -> named(command, who), deadline), Function.identity(),
                RequestRouter::passesWithTime, false));
    }

    /** A refused membership change that waiting mends (see {@link #leaderOnly}). */
    private static boolean passesWithTime(Throwable cause) {
        return cause instanceof ConfChangeRefusedException refused && refused.retryable()
                && refused.reason() != ConfChangeResult.Reason.LEARNER_BEHIND
                && refused.reason() != ConfChangeResult.Reason.LEARNER_NOT_RESPONDING;
    }

    /**
     * An auth call other than Authenticate (the client handler answers that). Reads answer from the applied
     * auth state after a ReadIndex; a change is proposed by the leader (a follower forwards it), after
     * {@link AuthGate#command} hashed its password on the auth worker.
     */
    private CompletableFuture<Attempt> auth(Frame request, Who who, long deadline) {
        AuthRequest req = request.getAuthRequest();
        if (!AuthGate.isChange(req)) {
            return read(() -> Frame.newBuilder().setAuthResponse(stateMachine.auth().query(req)
                    .toBuilder().setHeader(ResponseHeader.newBuilder().setRevision(stateMachine.revision()))).build(),
                    deadline);
        }
        return policy.onLeader(request, deadline, () -> policy.settled(request, gate.command(req)
                .thenCompose(cmd -> driver.propose(named(Command.newBuilder()
                        .setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime())).setAuth(cmd).build(), who)
                        .toByteArray(), policy.remaining(deadline))), Frames::response, cause -> false, false));
    }

    private CompletableFuture<Attempt> write(Frame request, Who who, long deadline) {
        return policy.onLeader(request, deadline, () -> {
            if (request.hasPublishMemberRequest() && !inConfiguration(request.getPublishMemberRequest().getMember().getId())) {
                return RoutePolicy.done(Frames.error(0, Frames.error(Error.Code.INVALID_ARGUMENT,
                        "member id " + request.getPublishMemberRequest().getMember().getId() + " is not in the"
                                + " cluster's configuration; only members publish their addresses")));
            }
            Command command = command(request, who);
            // Issue 30: what apply would refuse for its values never reaches the log; the client hears why now.
            Optional<Error> refusal = Admission.check(command);
            if (refusal.isPresent()) {
                return RoutePolicy.done(Frames.error(0, refusal.get()));
            }
            return policy.settled(request, driver.propose(command.toByteArray(), policy.remaining(deadline)),
                    Frames::response, cause -> false, true);
        });
    }

    /**
     * The command to propose, stamped now (a retry stamps anew: it may be proposed in another term), naming its
     * caller; a session registration gets its secret here, chosen afresh for each proposal (issue 31).
     */
    private Command command(Frame request, Who who) {
        Command command = named(Frames.command(request, LogClock.stamp(driver.leadership(), clock.nanoTime())), who);
        if (command.hasRegisterSession()) {
            byte[] secret = new byte[SESSION_SECRET_BYTES];
            random.nextBytes(secret);
            return command.toBuilder().setRegisterSession(RegisterSessionRequest.newBuilder()
                    .setSecret(ByteString.copyFrom(secret))).build();
        }
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

    /**
     * {@code command} as {@code who}'s (issue 33): its caller, the auth revision its door checked it against,
     * and this leader's per-user bounds, which apply reads from the entry so every member applies the same.
     * The member's own commands carry none of these.
     */
    private Command named(Command command, Who who) {
        if (who.authRevision() == NO_REVISION) {
            return command;
        }
        return command.toBuilder().setCaller(who.caller()).setAuthRevision(who.authRevision())
                .setMaxLeasesPerUser(userQuotas.maxLeasesPerUser())
                .setMaxSessionsPerUser(userQuotas.maxSessionsPerUser()).build();
    }

    private CompletableFuture<Attempt> range(RangeRequest request, long deadline) {
        Supplier<Frame> query = () -> Frame.newBuilder().setRangeResponse(stateMachine.range(request)).build();
        if (request.getSerializable()) {
            return countRead(driver.readLocal(query)).thenApply(Attempt::done);
        }
        return read(query, deadline);
    }

    /**
     * A linearizable read (§6.4). Reads change nothing, so any failure short of the deadline is retried —
     * also a TIMEOUT: a follower's ReadIndex request to a leader that just died is never answered, and the
     * next attempt goes to the new leader. Each attempt is bounded by {@code readAttemptTimeout}.
     */
    private CompletableFuture<Attempt> read(Supplier<Frame> query, long deadline) {
        Duration attempt = Duration.ofNanos(Math.min(readAttemptTimeout.toNanos(), policy.remaining(deadline).toNanos()));
        return countRead(driver.read(query, attempt)).handle((frame, e) -> {
            if (e == null) {
                return Attempt.done(frame);
            }
            if (Errors.unwrap(e) instanceof RaftException) {
                return Attempt.retry(Errors.of(e, view));
            }
            return Attempt.done(Frames.error(0, Errors.of(e, view)));
        });
    }

    private CompletableFuture<Frame> countRead(CompletableFuture<Frame> read) {
        return read.whenComplete((f, e) -> (e == null ? metrics.readsOk : metrics.readsFailed).increment());
    }

    private CompletableFuture<Frame> status() {
        CompletableFuture<StatusResponse> applied = driver.readLocal(() -> StatusResponse.newBuilder()
                .setHeader(ResponseHeader.newBuilder().setRevision(stateMachine.revision()))
                .setDbSize(stateMachine.accountedBytes())
                .addAllAlarms(stateMachine.alarms().getAlarmsList()).build());
        return driver.status().thenCombine(applied, (s, a) -> {
            StatusResponse.Builder b = a.toBuilder()
                    .setVersion(version).setLeader(s.leaderId()).setRaftIndex(s.commitIndex())
                    .setRaftTerm(s.term()).setRaftAppliedIndex(s.appliedIndex())
                    .addAllMembers(view.members().values());
            if (s.leaderId() == RaftNode.NONE) {
                b.addErrors("no leader is known");
            }
            // etcd's Status lists each armed alarm as an error, in AlarmMember's text form.
            a.getAlarmsList().forEach(m -> b.addErrors("memberID:" + m.getMemberId() + " alarm:" + m.getAlarm()));
            return Frame.newBuilder().setStatusResponse(b).build();
        }).exceptionally(e -> Frames.error(0, Errors.of(e, view)));
    }

    /**
     * Whether {@code id} is this leader or one of the followers it replicates to. Checked before a
     * PublishMember is proposed, so the replicated member table holds configured members only: the call is
     * internal but reachable from the client port, and every other id would add an entry for good.
     */
    private boolean inConfiguration(long id) {
        return id == view.memberId() || (view.status() != null && view.status().progress().containsKey(id));
    }

}
