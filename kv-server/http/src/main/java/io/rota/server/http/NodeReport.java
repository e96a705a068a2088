package io.rota.server.http;

import io.rota.proto.Member;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.transport.PeerStats;
import io.rota.server.api.ServerMetrics;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.watch.WatchHub;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * What the HTTP port shows, built from a fresh {@link NodeStatus} (taken on the driver thread) and the
 * server's counters. JSON is written by hand: six flat fields and a list do not justify a library.
 */
public final class NodeReport {

    /** An HTTP answer. */
    record Page(int status, String contentType, String body) {
    }

    /** Sizes of the state, read on the driver thread (the state machine is not thread-safe). */
    private record Sizes(int keys, int leases) {
    }

    private final String name;
    /** The cluster's id (issue 32: each cluster's own), shown in /status. */
    private final String clusterId;
    private final RaftDriver<?> driver;
    private final CoordinationStateMachine stateMachine;
    private final ClusterView view;
    private final ServerMetrics metrics;
    private final WatchHub watchHub;
    private final Supplier<Map<Long, PeerStats>> peerStats;

    public NodeReport(String name, String clusterId, RaftDriver<?> driver, CoordinationStateMachine stateMachine,
                      ClusterView view, ServerMetrics metrics, WatchHub watchHub,
                      Supplier<Map<Long, PeerStats>> peerStats) {
        this.name = name;
        this.clusterId = clusterId;
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.metrics = metrics;
        this.watchHub = watchHub;
        this.peerStats = peerStats;
    }

    /** 200 "ok" when a leader is known and everything committed here is applied; else 503 with the reason. */
    CompletableFuture<Page> health() {
        return driver.status().thenApply(s -> {
            if (s.leaderId() == RaftNode.NONE) {
                return new Page(503, "text/plain", "no leader is known (term " + s.term() + ")\n");
            }
            if (s.appliedIndex() < s.commitIndex()) {
                return new Page(503, "text/plain", "applying: applied " + s.appliedIndex() + " of committed "
                        + s.commitIndex() + "\n");
            }
            return new Page(200, "text/plain", "ok\n");
        });
    }

    CompletableFuture<Page> status() {
        return driver.status().thenApply(s -> {
            StringBuilder json = new StringBuilder("{");
            field(json, "name", quote(name)).append(',');
            field(json, "cluster_id", quote(clusterId)).append(',');
            field(json, "id", Long.toString(s.id())).append(',');
            field(json, "role", quote(s.role().name().toLowerCase())).append(',');
            field(json, "term", Long.toString(s.term())).append(',');
            field(json, "leader", Long.toString(s.leaderId())).append(',');
            field(json, "commit", Long.toString(s.commitIndex())).append(',');
            field(json, "applied", Long.toString(s.appliedIndex())).append(',');
            field(json, "snapshot", Long.toString(s.snapshotIndex())).append(",\"members\":[");
            boolean first = true;
            for (Member m : view.members().values()) {
                json.append(first ? "" : ",").append('{');
                field(json, "id", Long.toString(m.getId())).append(',');
                field(json, "name", quote(m.getName())).append(',');
                field(json, "client", quote(m.getClientAddress())).append(',');
                field(json, "peer", quote(m.getPeerAddress())).append('}');
                first = false;
            }
            return new Page(200, "application/json", json.append("]}\n").toString());
        });
    }

    /** LAB MODE: ask this member, if it leads, to hand leadership to member {@code to} (§3.10). */
    CompletableFuture<Boolean> transferLeadership(long to) {
        return driver.transferLeadership(to);
    }

    /** Prometheus text exposition format, version 0.0.4. */
    CompletableFuture<Page> metrics() {
        CompletableFuture<Sizes> sizes = driver.readLocal(() -> new Sizes(stateMachine.keyCount(),
                stateMachine.leaseCount()));
        return driver.status().thenCombine(sizes, (s, size) -> {
            StringBuilder out = new StringBuilder();
            gauge(out, "rota_raft_term", "Current Raft term", s.term());
            gauge(out, "rota_raft_commit_index", "Highest log index known committed", s.commitIndex());
            gauge(out, "rota_raft_applied_index", "Highest log index applied to the state machine", s.appliedIndex());
            gauge(out, "rota_raft_snapshot_index", "Index of the latest snapshot", s.snapshotIndex());
            family(out, "rota_raft_role", "1 for this member's current Raft role", "gauge");
            for (Role role : Role.values()) {
                out.append("rota_raft_role{role=\"").append(role.name().toLowerCase()).append("\"} ")
                        .append(s.role() == role ? 1 : 0).append('\n');
            }
            gauge(out, "rota_raft_leader_id", "Id of the known leader (0: none)", s.leaderId());
            counter(out, "rota_proposals_ok_total", "Proposals applied", metrics.proposalsOk.sum());
            counter(out, "rota_proposals_failed_total", "Proposals that failed", metrics.proposalsFailed.sum());
            counter(out, "rota_forwarded_total", "Writes forwarded to the leader", metrics.forwarded.sum());
            counter(out, "rota_reads_ok_total", "Reads answered", metrics.readsOk.sum());
            counter(out, "rota_reads_failed_total", "Reads that failed", metrics.readsFailed.sum());
            counter(out, "rota_malformed_frames_total", "Client connections closed for a malformed frame",
                    metrics.malformedFrames.sum());
            gauge(out, "rota_client_connections", "Open client connections", metrics.connections.sum());
            gauge(out, "rota_watches", "Live watches", watchHub.watchCount());
            gauge(out, "rota_keys", "Live keys", size.keys());
            gauge(out, "rota_leases", "Live leases", size.leases());
            counter(out, "rota_raft_entries_applied_total", "Log entries applied to the state machine",
                    metrics.entriesApplied.sum());
            counter(out, "rota_raft_snapshots_total", "Snapshots taken (each compacts the log)",
                    metrics.snapshots.sum());
            metrics.fsync.writeTo(out, "rota_fsync_duration_seconds",
                    "Time to persist a Raft Ready that must be durable (one fsync)");
            MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            gauge(out, "rota_jvm_heap_used_bytes", "JVM heap in use", heap.getUsed());
            gauge(out, "rota_jvm_heap_committed_bytes", "JVM heap committed", heap.getCommitted());
            gauge(out, "rota_jvm_heap_after_gc_bytes", "JVM heap in use after the last GC (-1: none yet)",
                    HeapAfterGc.bytes());
            gauge(out, "rota_jvm_heap_max_bytes", "JVM heap limit (-Xmx)", heap.getMax());
            Map<Long, PeerStats> peers = peerStats.get();
            peerFamily(out, "rota_peer_sent_total", "Messages sent to the peer", peers, PeerStats::sent);
            peerFamily(out, "rota_peer_dropped_total", "Messages dropped (queue full)", peers, PeerStats::dropped);
            peerFamily(out, "rota_peer_received_total", "Messages received from the peer", peers, PeerStats::received);
            peerFamily(out, "rota_peer_queued", "Messages waiting to be sent", peers, PeerStats::queued);
            peerFamily(out, "rota_peer_reconnects_total", "Reconnections", peers, PeerStats::reconnects);
            return new Page(200, "text/plain; version=0.0.4", out.toString());
        });
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        family(out, name, help, "gauge").append(name).append(' ').append(value).append('\n');
    }

    private static void counter(StringBuilder out, String name, String help, long value) {
        family(out, name, help, "counter").append(name).append(' ').append(value).append('\n');
    }

    private static void peerFamily(StringBuilder out, String name, String help, Map<Long, PeerStats> peers,
                                   ToLongFunction<PeerStats> value) {
        family(out, name, help, name.endsWith("_total") ? "counter" : "gauge");
        peers.forEach((id, stats) -> out.append(name).append("{peer=\"").append(id).append("\"} ")
                .append(value.applyAsLong(stats)).append('\n'));
    }

    private static StringBuilder family(StringBuilder out, String name, String help, String type) {
        return out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static StringBuilder field(StringBuilder json, String key, String value) {
        return Json.field(json, key, value);
    }

    private static String quote(String s) {
        return Json.quote(s);
    }
}
