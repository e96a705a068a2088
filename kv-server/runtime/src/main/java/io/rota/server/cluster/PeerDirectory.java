package io.rota.server.cluster;

import io.rota.proto.Member;
import io.rota.proto.RegisteredMember;
import io.rota.proto.facts.BadValueException;
import io.rota.proto.facts.HostPort;
import io.rota.raft.transport.NettyPeerTransport;
import io.rota.raft.transport.PeerAdmission;
import io.rota.server.kv.MemberRegistryListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The server's side of a changing membership (issue 13), kept from the replicated member tables:
 * <ul>
 *   <li>the peer transport's table: a member registered or published is dialled and admitted at its peer
 *       address, a removed one is forgotten and its connection closed. The registry is read first, then the
 *       publications; they never disagree after a `member update`, which rewrites both (design Y31), so the
 *       order only matters for a member that republished a new address itself (its own word wins);</li>
 *   <li>who has joined: published members and removed ones. A fresh process (an empty data directory) under
 *       such an id, and any process under a removed id, is refused in the handshake ({@link PeerAdmission})
 *       with what happened and how to replace the member; this member, refused so, stops ({@link #fatal()});</li>
 *   <li>this member's own "has joined", written to its {@link MemberIdentity} once its own publication is
 *       applied from its log.</li>
 * </ul>
 * {@link #membersChanged} runs on the driver thread, the admission methods on event loops: the sets they
 * share are replaced whole, never changed in place.
 */
public final class PeerDirectory implements MemberRegistryListener, PeerAdmission {

    private static final Logger log = LoggerFactory.getLogger(PeerDirectory.class);

    private final long selfId;
    private final String clusterId;
    private final MemberIdentity identity;
    private final Path dataDir;
    private final NettyPeerTransport transport;
    private final CompletableFuture<String> fatal = new CompletableFuture<>();
    private volatile boolean joined;
    /** Whether the log is still empty (set once the store is built; until then, empty). */
    private volatile java.util.function.BooleanSupplier emptyLog = () -> true;
    private volatile Set<Long> joinedIds = Set.of();
    private volatile Set<Long> removedIds = Set.of();
    /** Member names by id: --initial-cluster's, then the registry's (members added at runtime). */
    private volatile java.util.Map<Long, String> names = java.util.Map.of();

    public PeerDirectory(long selfId, MemberIdentity identity, Path dataDir, NettyPeerTransport transport) {
        this.selfId = selfId;
        this.clusterId = identity.clusterId();
        this.identity = identity;
        this.joined = identity.joined();
        this.dataDir = dataDir;
        this.transport = transport;
    }

    /** Where {@link #fresh()} learns whether this member's log is still empty. */
    public void setEmptyLog(java.util.function.BooleanSupplier emptyLog) {
        this.emptyLog = emptyLog;
    }

    /** The names of the members this process starts with (--initial-cluster), by id. */
    public void setInitialNames(java.util.Map<Long, String> initial) {
        this.names = java.util.Map.copyOf(initial);
    }

    /**
     * The name of member {@code id}, or null when this member knows none: what a peer's TLS certificate must
     * name (io.rota.raft.transport.PeerIdentity#byMemberName). Any thread.
     */
    public String memberName(long id) {
        return names.get(id);
    }

    /** Completes with the reason when this fresh member was refused by a peer: it must stop. */
    public CompletableFuture<String> fatal() {
        return fatal;
    }

    @Override
    public void membersChanged(List<RegisteredMember> registry, List<Member> published) {
        Set<Long> joinedNow = new HashSet<>();
        Set<Long> removedNow = new HashSet<>();
        java.util.Map<Long, String> namesNow = new java.util.HashMap<>(names);
        // A registry entry `member update` made for a bootstrap member that never published has no name.
        registry.stream().filter(r -> !r.getName().isEmpty()).forEach(r -> namesNow.put(r.getId(), r.getName()));
        published.forEach(m -> namesNow.putIfAbsent(m.getId(), m.getName()));
        names = java.util.Map.copyOf(namesNow);
        for (RegisteredMember r : registry) {
            if (r.getRemoved()) {
                removedNow.add(r.getId());
                transport.removePeer(r.getId());
            } else if (!r.getPeerAddress().isEmpty()) {
                dial(r.getId(), r.getPeerAddress());
            }
        }
        for (Member m : published) {
            joinedNow.add(m.getId());
            if (!m.getPeerAddress().isEmpty() && !removedNow.contains(m.getId())) {
                dial(m.getId(), m.getPeerAddress());
            }
        }
        joinedIds = Set.copyOf(joinedNow);
        removedIds = Set.copyOf(removedNow);
        if (joinedNow.contains(selfId)) {
            // Our own publication is in our log: from now on this directory has taken part in the cluster.
            recordJoined();
        }
    }

    /**
     * Records "joined" in this member's identity file (fsync'd), once. Called when this member's own
     * publication is applied, and also just BEFORE the member first proposes that publication
     * ({@link io.rota.server.api.MemberPublisher}): the publication may commit on the others while this
     * newcomer's own log is still empty (a learner catching up by snapshot), and a peer that redials it then
     * must not take it for a fresh process under a joined id — it is the very process that is joining (design
     * M12). A process that has not reached this point, on an empty directory, is still fresh.
     */
    public synchronized void recordJoined() {
        if (joined) {
            return;
        }
        identity.asJoined().write(dataDir);
        joined = true;
        log.info("member {} has joined cluster '{}' (recorded in {})", selfId, clusterId,
                dataDir.resolve(MemberIdentity.FILE));
    }

    /**
     * Fresh: never joined, and started on an empty log that no leader has written to yet. A member restarted
     * on its own data is never fresh (its log may hold what it acknowledged), even if it crashed before it
     * recorded "joined".
     */
    @Override
    public boolean fresh() {
        return !joined && emptyLog.getAsBoolean();
    }

    @Override
    public String refuse(long peerId, boolean fresh) {
        if (removedIds.contains(peerId)) {
            return "member " + peerId + " was removed from cluster '" + clusterId + "' and its id is never used"
                    + " again. To bring this host back, add it as a new member: rotactl member add NAME --peer-urls"
                    + " HOST:PORT, then start it with the line that prints (--initial-cluster-state existing) on an"
                    + " empty data dir";
        }
        if (fresh && joinedIds.contains(peerId)) {
            return "member " + peerId + " has already joined cluster '" + clusterId + "', but it now starts with an"
                    + " empty data dir: it would have forgotten its votes and the entries it acknowledged, which can"
                    + " lose committed writes. Do not reuse a member id. To replace the member: rotactl member remove "
                    + peerId + ", then rotactl member add NAME --peer-urls HOST:PORT, and start the new member with"
                    + " the line that prints (--initial-cluster-state existing) on an empty data dir"
                    + " (docs/operations.md, 'Replace a dead member')";
        }
        return null;
    }

    /** Refusals are only for removed ids and fresh processes under joined ids: either way, stop (as etcd's removed members do). */
    @Override
    public void refusedBy(long peerId, String reason) {
        fatal.complete("peer " + peerId + " refused this member: " + reason);
    }

    /**
     * Dial member {@code id} at {@code peerAddress}. Apply refuses an address that is not host:port (issue 30),
     * but a log or snapshot written before that check may still hold one: it is skipped with a line saying how
     * to mend it, and the member carries on with the peers it can dial.
     */
    private void dial(long id, String peerAddress) {
        HostPort address;
        try {
            address = HostPort.parse("peer address of member " + id, peerAddress);
        } catch (BadValueException e) {
            log.error("Not dialling member {}: {}. Give it a valid address: rotactl member update {} HOST:PORT", id,
                    e.getMessage(), id);
            return;
        }
        transport.addPeer(id, address.unresolved());
    }
}
