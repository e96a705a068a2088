package io.rota.server.api;

import io.rota.proto.Frame;
import io.rota.proto.MemberRemoveRequest;
import io.rota.raft.node.NodeStatus;
import io.rota.server.cluster.ClusterView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The second half of {@code --force-new-cluster} (docs/design.md MF10): once this member leads its cluster of
 * one, every other member the old cluster knew is retired in the registry, as {@code member remove} retires a
 * member, so an old process that comes back is refused at the handshake instead of talking to the new
 * cluster. Each retirement is a {@code member remove} of a member no longer in the configuration: the change
 * is already done (NOT_A_MEMBER), and the request goes on to {@code RetireMember}. Retried on later refreshes
 * until none is left; at most one round in flight.
 */
public final class ForcedClusterRetirement implements ClusterView.Listener {

    private static final Logger log = LoggerFactory.getLogger(ForcedClusterRetirement.class);

    private final long selfId;
    private final RequestRouter router;
    /** The old members still to retire: known ids, minus this member and those already removed. */
    private final Supplier<CompletableFuture<Set<Long>>> toRetire;
    private volatile boolean inFlight;
    private volatile boolean done;

    public ForcedClusterRetirement(long selfId, RequestRouter router, Supplier<CompletableFuture<Set<Long>>> toRetire) {
        this.selfId = selfId;
        this.router = router;
        this.toRetire = toRetire;
    }

    /** Timer thread. */
    @Override
    public void onRefresh(NodeStatus previous, NodeStatus current) {
        if (done || inFlight || current.leaderId() != selfId) {
            return;
        }
        inFlight = true;
        toRetire.get().thenCompose(ids -> {
            if (ids.isEmpty()) {
                done = true;
                log.warn("--force-new-cluster: every old member is retired; member {} leads a cluster of one."
                        + " Add members with `rotactl member add --learner`, then promote them", selfId);
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<?>[] each = ids.stream().map(id -> router.handleInternal(Frame.newBuilder()
                    .setMemberRemoveRequest(MemberRemoveRequest.newBuilder().setId(id)).build())
                    .whenComplete((answer, e) -> {
                        if (e == null && answer.hasMemberRemoveResponse()) {
                            log.warn("--force-new-cluster: retired old member {}: its process is refused from now on",
                                    id);
                        } else {
                            log.info("--force-new-cluster: retiring old member {} failed, will retry: {}", id,
                                    e != null ? e.toString() : answer.getError().getMessage());
                        }
                    })).toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(each);
        }).whenComplete((ignored, e) -> inFlight = false);
    }
}
