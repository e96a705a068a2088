package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.Frame;
import io.rota.proto.MemberAddRequest;
import io.rota.proto.MemberListRequest;
import io.rota.proto.MemberPromoteRequest;
import io.rota.proto.MemberUpdateRequest;
import io.rota.proto.MemberRemoveRequest;
import io.rota.proto.MoveLeaderRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.StatusRequest;
import io.rota.proto.StatusResponse;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The cluster API: each member's status, its health, the member list, and membership changes. Obtain it
 * from {@link RotaClient#cluster()}. Unlike the other APIs, {@link #status} and {@link #health} ask one given
 * member and do not move on to another when it fails: they are how an operator sees that member.
 *
 * <p>Membership changes (docs/operations.md has the runbooks) go to the leader, one server at a time (Raft
 * thesis §4.1): {@link #addMember} registers a member and adds it — as a learner by default in rotactl,
 * which receives the log without a vote — then {@link #promoteMember} makes it a voter once it has caught
 * up; {@link #removeMember} takes a member out; {@link #moveLeader} hands leadership to another voter. A
 * refusal fails with {@link RotaException.Code#MEMBERSHIP_REFUSED} and the reason in
 * {@link RotaException#membershipRefusal()}; the refusals that pass with time (an earlier change not yet
 * committed) were already retried by the server until the call timeout.
 */
public final class Cluster {

    /** The key a health check reads (it need not exist: the read proves a ReadIndex round, as etcd's). */
    private static final ByteString HEALTH_KEY = ByteString.copyFrom("health", StandardCharsets.UTF_8);

    private final Calls calls;
    private final ConnectionPool pool;

    Cluster(Calls calls, ConnectionPool pool) {
        this.calls = calls;
        this.pool = pool;
    }

    /**
     * Asks the member at {@code endpoint} for its status, within the client's call timeout.
     *
     * @param endpoint the member's client address, {@code host:port} (need not be one of the client's)
     * @return its status; fails with UNAVAILABLE if it cannot be reached, TIMEOUT if it does not answer
     */
    public CompletableFuture<MemberStatus> statusAsync(String endpoint) {
        return ask(endpoint, Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance()), () -> { })
                .thenApply(f -> status(endpoint, f.getStatusResponse()));
    }

    /**
     * Asks the member at {@code endpoint} for its status and waits.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return its status
     * @throws RotaException UNAVAILABLE if it cannot be reached, TIMEOUT if it does not answer in time
     */
    public MemberStatus status(String endpoint) {
        return Errors.await(statusAsync(endpoint));
    }

    /**
     * Asks the member at {@code endpoint} for a hash of its key-value state at {@code revision}, as etcd's
     * HashKV: served from that member's applied state, so members that applied the same revision must give
     * the same hash — a different one means their states diverged.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @param revision the revision to hash; 0 for the member's current one
     * @return the hash; fails with COMPACTED if the revision is older than the member's history,
     *         INVALID_ARGUMENT if the member has not reached it, UNAVAILABLE or TIMEOUT
     */
    public CompletableFuture<KvHash> hashKvAsync(String endpoint, long revision) {
        return ask(endpoint, Frame.newBuilder().setHashKvRequest(io.rota.proto.HashKvRequest.newBuilder()
                .setRevision(revision)), () -> { })
                .thenApply(f -> {
                    io.rota.proto.HashKvResponse r = f.getHashKvResponse();
                    return new KvHash(endpoint, r.getHeader().getMemberId(), Integer.toUnsignedLong(r.getHash()),
                            r.getHashRevision(), r.getCompactRevision());
                });
    }

    /**
     * Checks that the member at {@code endpoint} can serve a linearizable read (a ReadIndex round with
     * its leader: it is connected to a working majority), within the client's call timeout.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return how long the read took (from sending it, the connection already open); fails with the
     *         member's error, UNAVAILABLE or TIMEOUT
     */
    public CompletableFuture<Duration> healthAsync(String endpoint) {
        long[] sent = new long[1];
        return ask(endpoint, Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(HEALTH_KEY)),
                () -> sent[0] = System.nanoTime())
                .thenApply(f -> Duration.ofNanos(System.nanoTime() - sent[0]));
    }

    /**
     * Checks that the member at {@code endpoint} can serve a linearizable read, and waits.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return how long the read took
     * @throws RotaException the member's error, UNAVAILABLE or TIMEOUT
     */
    public Duration health(String endpoint) {
        return Errors.await(healthAsync(endpoint));
    }

    /**
     * The members that have published their addresses, asked of whichever member answers.
     *
     * @return the members, by id
     */
    public CompletableFuture<List<Member>> membersAsync() {
        return calls.execute(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance()), false)
                .thenApply(f -> f.getStatusResponse().getMembersList().stream().map(Member::of)
                        .sorted(Comparator.comparingLong(Member::id)).toList());
    }

    /**
     * The members that have published their addresses, and waits.
     *
     * @return the members, by id
     * @throws RotaException on failure
     */
    public List<Member> members() {
        return Errors.await(membersAsync());
    }

    /**
     * Adds a member: the cluster assigns it an id (one above every id ever used) and records its addresses,
     * then adds it to the configuration. Start the new member afterwards with
     * {@code --initial-cluster-state existing} and {@code --initial-cluster} {@link AddedMember#initialCluster()}
     * on an empty data directory; it catches up from the leader (by snapshot if the log was compacted).
     * Calling it again with the same name and peer address returns the same member.
     *
     * @param name          the new member's name (letters, digits, '_', '.', '-'; unique)
     * @param peerAddress   {@code host:port} the other members dial (unique)
     * @param clientAddress {@code host:port} of its client protocol, or "" (it publishes it when it starts)
     * @param learner       add as a learner (safe: no vote until promoted) rather than a voter — a new voter
     *                      with an empty log counts toward the quorum at once (thesis §4.2.1)
     * @return the added member and the configuration's members after the change
     */
    public CompletableFuture<AddedMember> addMemberAsync(String name, String peerAddress, String clientAddress,
                                                         boolean learner) {
        return addMemberAsync(name, peerAddress, clientAddress, learner, false);
    }

    /**
     * {@link #addMemberAsync(String, String, String, boolean)}, with {@code force}: the cluster refuses to add
     * a voter when too few voters answer its leader to commit the larger configuration (MEMBERSHIP_REFUSED
     * QUORUM_AT_RISK, strict reconfiguration); {@code force} adds it anyway. Use it only knowingly: the
     * cluster may take no writes until the new member starts (docs/operations.md).
     *
     * @param force skip the strict quorum check
     * @return the added member and the configuration's members after the change
     */
    public CompletableFuture<AddedMember> addMemberAsync(String name, String peerAddress, String clientAddress,
                                                         boolean learner, boolean force) {
        return calls.execute(Frame.newBuilder().setMemberAddRequest(MemberAddRequest.newBuilder().setName(name)
                        .setPeerAddress(peerAddress).setClientAddress(clientAddress).setLearner(learner)
                        .setForce(force)), false)
                .thenApply(f -> {
                    io.rota.proto.MemberAddResponse r = f.getMemberAddResponse();
                    return new AddedMember(r.getMember().getId(), r.getMember().getName(),
                            r.getMember().getPeerAddress(), learner, r.getMembersList().stream()
                            .map(m -> new ClusterMember(m.getId(), m.getName(), m.getPeerAddress(),
                                    m.getClientAddress(), m.getLearner(), false, 0, 0, false)).toList(),
                            r.getClusterId());
                });
    }

    /**
     * {@link #addMemberAsync} and waits.
     *
     * @param name          the new member's name
     * @param peerAddress   {@code host:port} the other members dial
     * @param clientAddress {@code host:port} of its client protocol, or ""
     * @param learner       add as a learner rather than a voter
     * @return the added member
     * @throws RotaException MEMBERSHIP_REFUSED (for example NAME_TAKEN), or as any call
     */
    public AddedMember addMember(String name, String peerAddress, String clientAddress, boolean learner) {
        return addMember(name, peerAddress, clientAddress, learner, false);
    }

    /**
     * {@link #addMemberAsync(String, String, String, boolean, boolean)} and waits.
     *
     * @param name          the new member's name
     * @param peerAddress   {@code host:port} the other members dial
     * @param clientAddress {@code host:port} of its client protocol, or ""
     * @param learner       add as a learner rather than a voter
     * @param force         skip the strict quorum check
     * @return the added member
     * @throws RotaException MEMBERSHIP_REFUSED (NAME_TAKEN, QUORUM_AT_RISK), or as any call
     */
    public AddedMember addMember(String name, String peerAddress, String clientAddress, boolean learner,
                                 boolean force) {
        return Errors.await(addMemberAsync(name, peerAddress, clientAddress, learner, force));
    }

    /**
     * Removes member {@code id} from the configuration, then retires its id for good: every member forgets
     * its peer address, and a process under that id is refused. Removing the leader makes it hand over once
     * the change commits (§4.2.2). Stop the removed member's process afterwards.
     *
     * @param id the member's id
     * @return completes when done; fails MEMBERSHIP_REFUSED (NOT_A_MEMBER is not one: a retry finds it gone
     *         and completes; LAST_VOTER is, and so is QUORUM_AT_RISK: too few of the remaining voters answer
     *         the leader to commit the change — see {@link #removeMemberAsync(long, boolean)})
     */
    public CompletableFuture<Void> removeMemberAsync(long id) {
        return removeMemberAsync(id, false);
    }

    /**
     * {@link #removeMemberAsync(long)}; {@code force} skips the strict quorum check, for removing a member
     * while others are down for good. The cluster then takes no writes until enough of the remaining voters
     * answer (docs/operations.md, "Membership changes that lose quorum").
     *
     * @param id    the member's id
     * @param force skip the strict quorum check
     * @return completes when done
     */
    public CompletableFuture<Void> removeMemberAsync(long id, boolean force) {
        return calls.execute(Frame.newBuilder().setMemberRemoveRequest(MemberRemoveRequest.newBuilder().setId(id)
                .setForce(force)), false).thenApply(f -> null);
    }

    /**
     * {@link #removeMemberAsync} and waits.
     *
     * @param id the member's id
     * @throws RotaException MEMBERSHIP_REFUSED, or as any call
     */
    public void removeMember(long id) {
        Errors.await(removeMemberAsync(id));
    }

    /**
     * {@link #removeMemberAsync(long, boolean)} and waits.
     *
     * @param id    the member's id
     * @param force skip the strict quorum check
     * @throws RotaException MEMBERSHIP_REFUSED, or as any call
     */
    public void removeMember(long id, boolean force) {
        Errors.await(removeMemberAsync(id, force));
    }

    /**
     * Promotes learner {@code id} to voter. Refused with LEARNER_BEHIND while it is more than the
     * promotion threshold behind the leader (see {@link ClusterMember#caughtUp()}), and with
     * LEARNER_NOT_RESPONDING while it has not answered the leader within an election timeout: try again
     * later. QUORUM_AT_RISK: too few voters answer to commit the larger configuration.
     *
     * @param id the learner's id
     * @return completes once the promotion is applied
     */
    public CompletableFuture<Void> promoteMemberAsync(long id) {
        return promoteMemberAsync(id, false);
    }

    /**
     * {@link #promoteMemberAsync(long)}; {@code force} skips the strict quorum check only — a learner that is
     * behind or not answering is refused all the same.
     *
     * @param id    the learner's id
     * @param force skip the strict quorum check
     * @return completes once the promotion is applied
     */
    public CompletableFuture<Void> promoteMemberAsync(long id, boolean force) {
        return calls.execute(Frame.newBuilder().setMemberPromoteRequest(MemberPromoteRequest.newBuilder().setId(id)
                .setForce(force)), false).thenApply(f -> null);
    }

    /**
     * {@link #promoteMemberAsync} and waits.
     *
     * @param id the learner's id
     * @throws RotaException MEMBERSHIP_REFUSED (LEARNER_BEHIND, LEARNER_NOT_RESPONDING, NOT_A_LEARNER,
     *                       QUORUM_AT_RISK), or as any call
     */
    public void promoteMember(long id) {
        Errors.await(promoteMemberAsync(id));
    }

    /**
     * {@link #promoteMemberAsync(long, boolean)} and waits.
     *
     * @param id    the learner's id
     * @param force skip the strict quorum check
     * @throws RotaException MEMBERSHIP_REFUSED, or as any call
     */
    public void promoteMember(long id, boolean force) {
        Errors.await(promoteMemberAsync(id, force));
    }

    /**
     * Changes the peer address of member {@code id} (etcd's {@code member update}): every member dials it there
     * from now on. Restart the member listening at the new address ({@code --listen-peer}, and
     * {@code --advertise-peer} if it advertises one) on its own data directory; until then the others cannot
     * reach it. No configuration change: a member's identity is its id.
     *
     * @param id          the member's id
     * @param peerAddress its new {@code host:port} (unique among the members)
     * @return completes once the change is applied
     */
    public CompletableFuture<Void> updateMemberAsync(long id, String peerAddress) {
        return calls.execute(Frame.newBuilder().setMemberUpdateRequest(MemberUpdateRequest.newBuilder().setId(id)
                .setPeerAddress(peerAddress)), false).thenApply(f -> null);
    }

    /**
     * {@link #updateMemberAsync} and waits.
     *
     * @param id          the member's id
     * @param peerAddress its new {@code host:port}
     * @throws RotaException MEMBERSHIP_REFUSED (NOT_A_MEMBER for an unknown or removed id, NAME_TAKEN for an
     *                       address another member has), INVALID_ARGUMENT (not host:port), or as any call
     */
    public void updateMember(long id, String peerAddress) {
        Errors.await(updateMemberAsync(id, peerAddress));
    }

    /**
     * Hands leadership to voter {@code id} (Raft §3.10 leadership transfer) and waits until it leads.
     *
     * @param id the voter to lead
     * @return the leader's id afterwards ({@code id})
     */
    public CompletableFuture<Long> moveLeaderAsync(long id) {
        return calls.execute(Frame.newBuilder().setMoveLeaderRequest(MoveLeaderRequest.newBuilder().setTargetId(id)),
                false).thenApply(f -> f.getMoveLeaderResponse().getLeader());
    }

    /**
     * {@link #moveLeaderAsync} and waits.
     *
     * @param id the voter to lead
     * @return the leader's id afterwards
     * @throws RotaException MEMBERSHIP_REFUSED (NOT_A_VOTER, NOT_A_MEMBER), TIMEOUT, or as any call
     */
    public long moveLeader(long id) {
        return Errors.await(moveLeaderAsync(id));
    }

    /**
     * The members of the configuration as the leader sees them: voter or learner, leader, matchIndex, lag
     * and whether caught up.
     *
     * @return the members, by id
     */
    public CompletableFuture<List<ClusterMember>> memberListAsync() {
        return calls.execute(Frame.newBuilder().setMemberListRequest(MemberListRequest.getDefaultInstance()), false)
                .thenApply(f -> f.getMemberListResponse().getMembersList().stream().map(ClusterMember::of).toList());
    }

    /**
     * The cluster's id and the members of its configuration, from one answer of the leader (etcd's member list
     * carries {@code header.cluster_id} the same way). Each cluster gets an id of its own at bootstrap, and
     * a restore a fresh one (issue 32).
     *
     * @param clusterId the cluster's id; empty from a server before issue 32
     * @param members   the members, by id, as {@link #memberList()}
     */
    public record MemberListing(String clusterId, List<ClusterMember> members) {
    }

    /** @return the cluster's id and its members, from one answer */
    public CompletableFuture<MemberListing> memberListingAsync() {
        return calls.execute(Frame.newBuilder().setMemberListRequest(MemberListRequest.getDefaultInstance()), false)
                .thenApply(f -> new MemberListing(f.getMemberListResponse().getClusterId(),
                        f.getMemberListResponse().getMembersList().stream().map(ClusterMember::of).toList()));
    }

    /**
     * {@link #memberListingAsync} and waits.
     *
     * @return the cluster's id and its members
     * @throws RotaException on failure
     */
    public MemberListing memberListing() {
        return Errors.await(memberListingAsync());
    }

    /**
     * {@link #memberListAsync} and waits.
     *
     * @return the members, by id
     * @throws RotaException on failure
     */
    public List<ClusterMember> memberList() {
        return Errors.await(memberListAsync());
    }

    /**
     * One call to one member, no retry elsewhere; a typed error answer fails the future with it.
     * {@code onSend} runs once connected, just before the request goes out.
     */
    private CompletableFuture<Frame> ask(String endpoint, Frame.Builder request, Runnable onSend) {
        long timeoutNanos = calls.callTimeout().toNanos();
        return pool.connection(endpoint)
                .thenCompose(c -> {
                    onSend.run();
                    return c.call(request);
                })
                .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS)
                .handle((frame, e) -> {
                    if (e != null) {
                        throw Errors.of(e, endpoint, endpoint + " did not answer within "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
                    }
                    if (frame.hasError()) {
                        throw Errors.of(frame.getError());
                    }
                    return frame;
                });
    }

    private static MemberStatus status(String endpoint, StatusResponse r) {
        long self = r.getHeader().getMemberId();
        String name = r.getMembersList().stream().filter(m -> m.getId() == self).map(io.rota.proto.Member::getName)
                .findFirst().orElse("");
        return new MemberStatus(endpoint, self, name, r.getVersion(), r.getLeader(), r.getRaftTerm(),
                r.getRaftIndex(), r.getRaftAppliedIndex(), r.getHeader().getRevision(), r.getErrorsList());
    }
}
