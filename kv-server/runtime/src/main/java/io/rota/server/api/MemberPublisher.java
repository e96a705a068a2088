package io.rota.server.api;

import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.Clock;
import io.rota.raft.node.NodeStatus;
import io.rota.server.cluster.ClusterView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * etcd's "publish": once a leader is known, this member proposes its own attributes (name, client and
 * peer address) through Raft, so every member can look up where the leader takes client calls. Retried
 * (at most one attempt in flight, one per second) until the replicated member table shows it; not again
 * when only its peer address changed there afterwards (a `member update`).
 */
public final class MemberPublisher implements ClusterView.Listener {

    private static final Logger log = LoggerFactory.getLogger(MemberPublisher.class);
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ClusterView view;
    private final RequestRouter router;
    private final Member self;
    private final Clock clock;
    private final Runnable beforePublishing;
    private volatile boolean inFlight;
    private long lastAttempt;
    private boolean attempted;
    /**
     * The table has shown this process's publication. After that, an entry that differs only in the peer
     * address was moved by `member update` (the operator's word, applied later than ours): publishing the
     * old address again would undo it (design Y31). This member restarts at the new address to agree.
     */
    private boolean shown;

    public MemberPublisher(ClusterView view, RequestRouter router, Member self, Clock clock) {
        this(view, router, self, clock, () -> { });
    }

    /**
     * @param beforePublishing run (on the timer thread) before each proposal of this member's publication;
     *                         the server records "joined" there (PeerDirectory.recordJoined), since the
     *                         publication may commit before this member's own log holds anything
     */
    public MemberPublisher(ClusterView view, RequestRouter router, Member self, Clock clock, Runnable beforePublishing) {
        this.view = view;
        this.router = router;
        this.self = self;
        this.clock = clock;
        this.beforePublishing = beforePublishing;
    }

    /** Timer thread. */
    @Override
    public void onRefresh(NodeStatus previous, NodeStatus current) {
        Member inTable = view.members().get(self.getId());
        if (self.equals(inTable)) {
            shown = true;
        }
        if (inFlight || current.leaderId() == RaftNode.NONE || self.equals(inTable)
                || (shown && inTable != null && self.toBuilder().setPeerAddress(inTable.getPeerAddress()).build()
                        .equals(inTable))) {
            return;
        }
        long now = clock.nanoTime();
        if (attempted && now - lastAttempt < RETRY_NANOS) {
            return;
        }
        attempted = true;
        lastAttempt = now;
        inFlight = true;
        beforePublishing.run();
        Frame publish = Frame.newBuilder()
                .setPublishMemberRequest(PublishMemberRequest.newBuilder().setMember(self)).build();
        router.handleInternal(publish).whenComplete((answer, e) -> {
            inFlight = false;
            if (e == null && answer.hasPublishMemberResponse()) {
                log.info("published {} (id {}): client {}, peer {}", self.getName(), self.getId(),
                        self.getClientAddress(), self.getPeerAddress());
            } else {
                log.debug("publishing {} failed: {}", self.getName(), e != null ? e : answer.getError().getMessage());
            }
        });
    }
}
