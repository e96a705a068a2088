package io.rota.server.api;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.MemberAddRequest;
import io.rota.proto.MemberAddResponse;
import io.rota.proto.MemberInfo;
import io.rota.proto.MemberListResponse;
import io.rota.proto.MemberPromoteResponse;
import io.rota.proto.MemberRemoveResponse;
import io.rota.proto.MemberUpdateRequest;
import io.rota.proto.MoveLeaderResponse;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisteredMember;
import io.rota.proto.ResponseHeader;
import io.rota.proto.RetireMemberRequest;
import io.rota.proto.UpdateMemberRequest;
import io.rota.raft.core.ConfChange;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.Clock;
import io.rota.raft.node.ConfChangeRefusedException;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.node.RaftException;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.Admission;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.lease.LogClock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The membership requests (issue 13) as the leader carries them out; {@link RequestRouter} sends them here
 * on the leader and forwards them to it elsewhere. Each answer is a response frame, or a failed future with
 * the driver's exception ({@link ConfChangeRefusedException}, {@link RaftException}) for {@link Errors} to
 * map.
 * <ul>
 *   <li>Add: register the member through Raft (the state machine assigns an id never used before, and every
 *       member's transport learns its peer address when the entry applies), then propose the configuration
 *       change, ADD_LEARNER or ADD_VOTER (§4.1, §4.2.1). A retry of the same add finds the same entry.</li>
 *   <li>Remove: the configuration change first (§4.2.2: a removed leader steps down once it commits), then
 *       the registry entry is marked removed, which makes every member forget the peer.</li>
 *   <li>Promote: PROMOTE, which the core refuses while the learner is behind (LEARNER_BEHIND) or silent
 *       (LEARNER_NOT_RESPONDING).</li>
 *   <li>Add, remove and promote are strict (design MF2): refused QUORUM_AT_RISK unless the voters of the new
 *       configuration that answer the leader are a quorum of it, or the request says {@code force}.</li>
 *   <li>Update (etcd's MemberUpdate): one replicated entry rewrites the member's peer address; no
 *       configuration change, since a member's identity in Raft is its id, not its address (design Y31).</li>
 *   <li>Move leader: leadership transfer (§3.10), answered once the target leads.</li>
 *   <li>List: the leader's configuration with each member's matchIndex and lag.</li>
 * </ul>
 */
final class MembershipRequests {

    private final RaftDriver<CommandResult> driver;
    private final CoordinationStateMachine stateMachine;
    private final ClusterView view;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private final Duration pollInterval;
    /** What this member's own --initial-cluster said of each member (id → name and peer address). */
    private volatile Map<Long, RegisteredMember> configured = Map.of();
    /** The cluster's id, for `member add`'s answer (the new member's --cluster-id) and `member list`. */
    private volatile String clusterId = "";

    MembershipRequests(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, ClusterView view,
                       ScheduledExecutorService timer, Clock clock, Duration pollInterval) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.timer = timer;
        this.clock = clock;
        this.pollInterval = pollInterval;
    }

    /** Whether the frame is a membership request (leader-only, forwarded like a write). */
    static boolean isMembership(Frame f) {
        return switch (f.getBodyCase()) {
            case MEMBER_ADD_REQUEST, MEMBER_REMOVE_REQUEST, MEMBER_PROMOTE_REQUEST, MEMBER_UPDATE_REQUEST,
                 MOVE_LEADER_REQUEST, MEMBER_LIST_REQUEST -> true;
            default -> false;
        };
    }

    /**
     * Carry out {@code request} on this member, the leader; {@code deadline} is on {@link Clock#nanoTime()}. Every
     * command it proposes goes through {@code named} first, which names the caller and the auth revision its door
     * checked it against, so apply checks it too (issue 33).
     */
    CompletableFuture<Frame> handle(Frame request, UnaryOperator<Command> named, long deadline) {
        long id = switch (request.getBodyCase()) {
            case MEMBER_REMOVE_REQUEST -> request.getMemberRemoveRequest().getId();
            case MEMBER_PROMOTE_REQUEST -> request.getMemberPromoteRequest().getId();
            case MEMBER_UPDATE_REQUEST -> request.getMemberUpdateRequest().getId();
            case MOVE_LEADER_REQUEST -> request.getMoveLeaderRequest().getTargetId();
            default -> 1;
        };
        if (id == RaftNode.NONE) {   // the core's "nobody": a ConfChange of it is a programming error, not a request
            return CompletableFuture.failedFuture(new ApplyError(io.rota.proto.Error.newBuilder()
                    .setCode(io.rota.proto.Error.Code.INVALID_ARGUMENT)
                    .setMessage("member id 0 does not exist; ids start at 1 (rotactl member list)").build()));
        }
        return switch (request.getBodyCase()) {
            case MEMBER_ADD_REQUEST -> add(request.getMemberAddRequest(), named, deadline);
            case MEMBER_REMOVE_REQUEST -> remove(request.getMemberRemoveRequest().getId(),
                    request.getMemberRemoveRequest().getForce(), named, deadline);
            case MEMBER_PROMOTE_REQUEST -> driver.changeMembership(
                    ConfChange.promote(request.getMemberPromoteRequest().getId()),
                    request.getMemberPromoteRequest().getForce(), remaining(deadline))
                    .thenApply(c -> Frame.newBuilder().setMemberPromoteResponse(MemberPromoteResponse.newBuilder()
                            .setHeader(ResponseHeader.getDefaultInstance())).build());
            case MEMBER_UPDATE_REQUEST -> update(request.getMemberUpdateRequest(), named, deadline);
            case MOVE_LEADER_REQUEST -> moveLeader(request.getMoveLeaderRequest().getTargetId(), deadline);
            case MEMBER_LIST_REQUEST -> list();
            default -> throw new IllegalArgumentException("not a membership request: " + request.getBodyCase());
        };
    }

    private CompletableFuture<Frame> add(MemberAddRequest req, UnaryOperator<Command> named, long deadline) {
        return driver.status().thenCompose(status -> {
            long floor = status.id();
            for (long id : status.configuration().members()) {
                floor = Math.max(floor, id);
            }
            Command register = Command.newBuilder()
                    .setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime()))
                    .setRegisterMember(RegisterMemberRequest.newBuilder().setName(req.getName())
                            .setPeerAddress(req.getPeerAddress()).setClientAddress(req.getClientAddress())
                            .setLearner(req.getLearner()).setIdFloor(floor))
                    .build();
            // A request that is wrong in itself is INVALID_ARGUMENT whatever the cluster's state (issue 30);
            // only a well-formed voter add is then judged against the quorum.
            Optional<io.rota.proto.Error> refusal = Admission.check(register);
            if (refusal.isPresent()) {
                return CompletableFuture.failedFuture(new ApplyError(refusal.get()));
            }
            if (!req.getLearner() && !req.getForce() && status.role() == io.rota.raft.core.Role.LEADER) {
                ConfChangeRefusedException atRisk = voterAddAtRisk(req.getName(), status);
                if (atRisk != null) {
                    return CompletableFuture.failedFuture(atRisk);
                }
            }
            return propose(named.apply(register), deadline);
        }).thenCompose(result -> {
            if (result.hasError()) {
                return CompletableFuture.failedFuture(new ApplyError(result.getError()));
            }
            RegisteredMember member = result.getRegisterMember().getMember();
            ConfChange change = req.getLearner() ? ConfChange.addLearner(member.getId())
                    : ConfChange.addVoter(member.getId());
            return driver.changeMembership(change, req.getForce(), remaining(deadline))
                    .exceptionallyCompose(e -> alreadyDone(e, ConfChangeResult.Reason.ALREADY_MEMBER))
                    .thenCompose(ignored -> members())
                    .thenApply(members -> Frame.newBuilder().setMemberAddResponse(MemberAddResponse.newBuilder()
                            .setHeader(ResponseHeader.getDefaultInstance()).setMember(member)
                            .addAllMembers(members).setClusterId(clusterId)).build());
        });
    }

    /**
     * The core's strict check for a voter add, asked before the registry entry is written, so that a refused add
     * leaves no registration behind (a retry with the same name and address would reuse it; another name at that
     * address would be NAME_TAKEN). The core checks again when the change is proposed; this is only the early
     * answer. The new server has not answered yet, so the voters that answer must be a quorum of one more.
     */
    private static ConfChangeRefusedException voterAddAtRisk(String name, NodeStatus status) {
        Configuration current = status.configuration();
        java.util.Set<Long> responding = new java.util.TreeSet<>();
        status.progress().forEach((id, p) -> {
            if (id == status.id() || p.responding()) {
                responding.add(id);
            }
        });
        long answering = current.voters().stream().filter(responding::contains).count();
        return answering >= Configuration.quorumOf(current.voters().size() + 1) ? null
                : ConfChangeRefusedException.voterAddAtRisk(name, responding, current);
    }

    private CompletableFuture<Frame> remove(long id, boolean force, UnaryOperator<Command> named, long deadline) {
        return driver.changeMembership(ConfChange.remove(id), force, remaining(deadline))
                // A retried remove (the first one's change committed, its retirement did not) finds it gone.
                .exceptionallyCompose(e -> alreadyDone(e, ConfChangeResult.Reason.NOT_A_MEMBER))
                .thenCompose(ignored -> {
                    Command retire = Command.newBuilder()
                            .setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime()))
                            .setRetireMember(RetireMemberRequest.newBuilder().setId(id)).build();
                    return propose(named.apply(retire), deadline);
                })
                .thenApply(result -> {
                    if (result.hasError()) {
                        throw new ApplyError(result.getError());
                    }
                    return Frame.newBuilder().setMemberRemoveResponse(MemberRemoveResponse.newBuilder()
                            .setHeader(ResponseHeader.getDefaultInstance())).build();
                });
    }

    /**
     * The configuration is the leader's to check (apply has none): an id outside it is NOT_A_MEMBER here, as
     * for move-leader; the replicated entry then rewrites the address, or refuses a removed id, a bad address
     * or one another member has.
     */
    private CompletableFuture<Frame> update(MemberUpdateRequest req, UnaryOperator<Command> named, long deadline) {
        return driver.status().thenCompose(status -> {
            if (!status.configuration().members().contains(req.getId())) {
                return CompletableFuture.failedFuture(new ApplyError(io.rota.proto.Error.newBuilder()
                        .setCode(io.rota.proto.Error.Code.MEMBERSHIP_REFUSED).setMembershipRefusal("NOT_A_MEMBER")
                        .setMessage("member " + req.getId() + " is not a member of the cluster").build()));
            }
            Command update = Command.newBuilder()
                    .setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime()))
                    .setUpdateMember(UpdateMemberRequest.newBuilder().setId(req.getId())
                            .setPeerAddress(req.getPeerAddress()).setInConfiguration(true)).build();
            return propose(named.apply(update), deadline);
        }).thenApply(result -> {
            if (result.hasError()) {
                throw new ApplyError(result.getError());
            }
            return Frame.newBuilder().setMemberUpdateResponse(result.getUpdateMember()).build();
        });
    }

    /**
     * Proposes {@code command} unless its values are refused (issue 30): a member with an address nobody can
     * dial, or a name no member can have, is answered INVALID_ARGUMENT here and never reaches the log.
     */
    private CompletableFuture<CommandResult> propose(Command command, long deadline) {
        Optional<io.rota.proto.Error> refusal = Admission.check(command);
        if (refusal.isPresent()) {
            return CompletableFuture.failedFuture(new ApplyError(refusal.get()));
        }
        return driver.propose(command.toByteArray(), remaining(deadline));
    }

    /** A refusal for {@code reason} means a retried request's change is already in place: carry on. */
    private static CompletableFuture<Configuration> alreadyDone(Throwable failure, ConfChangeResult.Reason reason) {
        Throwable e = Errors.unwrap(failure);
        if (e instanceof ConfChangeRefusedException refused && refused.reason() == reason) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.failedFuture(e);
    }

    private CompletableFuture<Frame> moveLeader(long target, long deadline) {
        return driver.status().thenCompose(status -> {
            if (!status.configuration().isVoter(target)) {
                boolean learner = status.configuration().isLearner(target);
                return CompletableFuture.failedFuture(new ApplyError(io.rota.proto.Error.newBuilder()
                        .setCode(io.rota.proto.Error.Code.MEMBERSHIP_REFUSED)
                        .setMembershipRefusal(learner ? "NOT_A_VOTER" : "NOT_A_MEMBER")
                        .setMessage("member " + target + (learner ? " is a learner; promote it first"
                                : " is not a member of the cluster") + " (only a voter can lead)").build()));
            }
            if (target == status.id()) {
                return CompletableFuture.completedFuture(moved(target));
            }
            return driver.transferLeadership(target).thenCompose(started -> {
                if (!started) {
                    return CompletableFuture.failedFuture(new RaftException(RaftException.Code.NOT_LEADER,
                            "member " + status.id() + " no longer leads", view.leaderId(), ""));
                }
                CompletableFuture<Frame> done = new CompletableFuture<>();
                awaitLeader(target, deadline, done);
                return done;
            });
        });
    }

    /** Polls the cluster view each tick until {@code target} leads, or fails TIMEOUT at the deadline. */
    private void awaitLeader(long target, long deadline, CompletableFuture<Frame> done) {
        if (view.leaderId() == target) {
            done.complete(moved(target));
        } else if (clock.nanoTime() - deadline >= 0) {
            done.completeExceptionally(new RaftException(RaftException.Code.TIMEOUT, "member " + target
                    + " did not take over before the deadline (leader now: " + view.leaderId() + ")",
                    RaftNode.NONE, ""));
        } else {
            timer.schedule(() -> awaitLeader(target, deadline, done), pollInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private static Frame moved(long leader) {
        return Frame.newBuilder().setMoveLeaderResponse(MoveLeaderResponse.newBuilder()
                .setHeader(ResponseHeader.getDefaultInstance()).setLeader(leader)).build();
    }

    private CompletableFuture<Frame> list() {
        return driver.status().thenCombine(driver.readLocal(this::known), (status, known) -> {
            MemberListResponse.Builder out = MemberListResponse.newBuilder().setClusterId(clusterId)
                    .setHeader(ResponseHeader.getDefaultInstance()).setLeader(status.leaderId())
                    .setLastIndex(status.lastIndex());
            for (long id : new java.util.TreeSet<>(status.configuration().members())) {
                RegisteredMember m = known.getOrDefault(id, RegisteredMember.newBuilder().setId(id).build());
                long match = id == status.id() ? status.lastIndex() : progress(status, id);
                long lag = Math.max(0, status.lastIndex() - match);
                out.addMembers(MemberInfo.newBuilder().setId(id).setName(m.getName())
                        .setPeerAddress(m.getPeerAddress()).setClientAddress(m.getClientAddress())
                        .setLearner(status.configuration().isLearner(id)).setLeader(id == status.leaderId())
                        .setMatchIndex(match).setLag(lag)
                        .setCaughtUp(match > 0 && lag <= ConfChange.PROMOTION_MAX_LAG_ENTRIES));
            }
            return Frame.newBuilder().setMemberListResponse(out).build();
        });
    }

    private static long progress(NodeStatus status, long id) {
        RaftNode.ProgressView p = status.progress().get(id);
        return p == null ? 0 : p.matchIndex();
    }

    /** The configuration's members with what the registry and the published table say of them. */
    private CompletableFuture<List<RegisteredMember>> members() {
        return driver.status().thenCombine(driver.readLocal(this::known), (status, known) -> {
            return status.configuration().members().stream().sorted()
                    .map(id -> known.getOrDefault(id, RegisteredMember.newBuilder().setId(id).build())
                            .toBuilder().setLearner(status.configuration().isLearner(id)).build())
                    .toList();
        });
    }

    /**
     * Both member tables as the state machine has them now (driver thread). Not the cluster view's published
     * table: that is refreshed on a timer, and would show a `member update` late, with the old address.
     */
    private Map<Long, RegisteredMember> known() {
        Map<Long, Member> published = new TreeMap<>();
        stateMachine.members().forEach(m -> published.put(m.getId(), m));
        return withConfigured(describe(stateMachine.registry(), published), configured);
    }

    /**
     * Give the cluster's id, and the members of this member's --initial-cluster: names and peer addresses for members that have not
     * published yet (a cluster just started). Without them, `member add` answered an --initial-cluster with
     * an empty entry ({@code m3=3@}) that the new member refused to start with.
     */
    void knowFromConfiguration(String clusterId, Map<Long, RegisteredMember> initialCluster) {
        this.clusterId = clusterId;
        this.configured = Map.copyOf(initialCluster);
    }

    /** {@code known}, with a name or peer address it lacks taken from {@code configured}; what is known wins. */
    static Map<Long, RegisteredMember> withConfigured(Map<Long, RegisteredMember> known,
                                                      Map<Long, RegisteredMember> configured) {
        if (configured.isEmpty()) {
            return known;
        }
        Map<Long, RegisteredMember> out = new TreeMap<>(known);
        configured.forEach((id, c) -> {
            RegisteredMember k = out.getOrDefault(id, RegisteredMember.newBuilder().setId(id).build());
            RegisteredMember.Builder b = k.toBuilder();
            if (k.getName().isEmpty()) {
                b.setName(c.getName());
            }
            if (k.getPeerAddress().isEmpty()) {
                b.setPeerAddress(c.getPeerAddress());
            }
            out.put(id, b.build());
        });
        return out;
    }

    /** Registry entries, completed (or supplied) by the published table: the latest addresses win. */
    static Map<Long, RegisteredMember> describe(List<RegisteredMember> registry, Map<Long, Member> published) {
        Map<Long, RegisteredMember> out = new TreeMap<>();
        registry.forEach(r -> out.put(r.getId(), r));
        published.forEach((id, m) -> out.put(id, out.getOrDefault(id, RegisteredMember.newBuilder().setId(id).build())
                .toBuilder().setName(m.getName()).setPeerAddress(m.getPeerAddress())
                .setClientAddress(m.getClientAddress()).build()));
        return out;
    }

    private Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - clock.nanoTime()));
    }

    /** The state machine answered a registry command with a typed error (a taken name, a bad address). */
    static final class ApplyError extends RuntimeException {
        final transient io.rota.proto.Error error;

        ApplyError(io.rota.proto.Error error) {
            super(error.getMessage(), null, false, false);
            this.error = error;
        }
    }
}
