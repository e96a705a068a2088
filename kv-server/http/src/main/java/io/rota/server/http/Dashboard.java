package io.rota.server.http;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.Command;
import io.rota.proto.Member;
import io.rota.raft.core.Entry;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.server.api.RecentWrites;
import io.rota.server.api.ServerMetrics;
import io.rota.server.cluster.ClusterView;
import io.rota.server.cluster.Timeline;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.lab.LabController;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * This member's part of the dashboard (docs/dashboard.md), as one JSON document: its Raft state and, if it
 * leads, each follower's progress; the tail of its log; its timeline of roles, terms and votes; the recipes'
 * state from its applied store; its recent writes. Every member serves its own; the page merges them.
 * Everything is bounded: {@link #LOG_TAIL} entries, a given number of events, the report's own limits.
 */
public final class Dashboard {

    /** Entries of the log shown per member. */
    static final int LOG_TAIL = 40;
    private static final long WRITES_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String name;
    /** Every member of the configuration by id (from --initial-cluster), published or not. */
    private final Map<Long, String> configured;
    private final RaftDriver<?> driver;
    private final CoordinationStateMachine stateMachine;
    private final String clusterId;
    private final ClusterView view;
    private final ServerMetrics metrics;
    private final LabController lab;

    /** @param lab the lab controller, or null when lab mode is off (the default) */
    public Dashboard(String name, String clusterId, Map<Long, String> configured, RaftDriver<?> driver,
                     CoordinationStateMachine stateMachine, ClusterView view, ServerMetrics metrics, LabController lab) {
        this.name = name;
        this.clusterId = clusterId;
        this.configured = Map.copyOf(configured);
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.metrics = metrics;
        this.lab = lab;
    }

    LabController lab() {
        return lab;
    }

    Map<Long, Member> members() {
        return view.members();
    }

    /** A line in this member's timeline (a lab action, for instance). */
    void note(String kind, String text) {
        metrics.timeline.note(kind, view.term(), text);
    }

    /**
     * The whole document, with this member's newest {@code events} timeline events; built on {@code executor}
     * (the driver thread only copies).
     */
    CompletableFuture<String> state(int events, Executor executor) {
        CompletableFuture<List<Entry>> log = driver.logTail(LOG_TAIL);
        CompletableFuture<CoordinationReport.Snapshot> coordination =
                driver.readLocal(() -> CoordinationReport.read(stateMachine));
        return driver.status().thenCompose(s -> log.thenCombineAsync(coordination,
                (entries, c) -> json(s, entries, c, events), executor));
    }

    private String json(NodeStatus s, List<Entry> log, CoordinationReport.Snapshot coordination, int events) {
        StringBuilder json = new StringBuilder(4096).append('{');
        Json.field(json, "name", Json.quote(name)).append(',');
        Json.field(json, "id", s.id()).append(',');
        Json.field(json, "cluster_id", Json.quote(clusterId)).append(',');
        Json.field(json, "time", driver.clock().wallMillis()).append(',');
        Json.field(json, "role", Json.quote(s.role().name().toLowerCase())).append(',');
        Json.field(json, "term", s.term()).append(',');
        Json.field(json, "leader", s.leaderId()).append(',');
        Json.field(json, "first", s.firstIndex()).append(',');
        Json.field(json, "last", s.lastIndex()).append(',');
        Json.field(json, "commit", s.commitIndex()).append(',');
        Json.field(json, "applied", s.appliedIndex()).append(',');
        Json.field(json, "snapshot", s.snapshotIndex()).append(',');
        Json.field(json, "lab", Boolean.toString(lab != null)).append(',');
        Json.field(json, "partitioned", Boolean.toString(lab != null && lab.partition().isCut())).append(',');
        writeMembers(json);
        json.append(",\"progress\":[");
        boolean first = true;
        for (Map.Entry<Long, RaftNode.ProgressView> p : s.progress().entrySet()) {
            if (p.getKey() == s.id()) {
                continue;   // the leader's own entry: it is not behind itself
            }
            json.append(first ? "" : ",").append('{');
            Json.field(json, "id", p.getKey()).append(',');
            Json.field(json, "match", p.getValue().matchIndex()).append(',');
            Json.field(json, "next", p.getValue().nextIndex()).append(',');
            Json.field(json, "state", Json.quote(p.getValue().state().toLowerCase())).append(',');
            Json.field(json, "responding", Boolean.toString(p.getValue().responding())).append('}');
            first = false;
        }
        json.append("],\"log\":[");
        for (int i = 0; i < log.size(); i++) {
            Entry e = log.get(i);
            json.append(i == 0 ? "" : ",").append('[').append(e.index()).append(',').append(e.term()).append(',')
                    .append(Json.quote(kind(e))).append(']');
        }
        json.append("],\"events\":[");
        writeEvents(json, metrics.timeline.last(events));
        json.append("],\"writes\":");
        RecentWrites.Summary w = metrics.writes.summarize(driver.clock().nanoTime(), WRITES_WINDOW_NANOS);
        json.append(String.format("{\"perSecond\":%.2f,\"p99Ms\":%.2f,\"count\":%d}", w.perSecond(), w.p99Millis(),
                w.count()));
        json.append(",\"coordination\":");
        CoordinationReport.writeJson(json, coordination);
        return json.append("}").toString();
    }

    /** Every configured member; with its addresses once it has published them. */
    private void writeMembers(StringBuilder json) {
        json.append("\"members\":[");
        boolean first = true;
        for (Map.Entry<Long, String> m : new TreeMap<>(configured).entrySet()) {
            Member published = view.members().get(m.getKey());
            json.append(first ? "" : ",").append('{');
            Json.field(json, "id", m.getKey()).append(',');
            Json.field(json, "name", Json.quote(m.getValue()));
            if (published != null) {
                json.append(',');
                Json.field(json, "client", Json.quote(published.getClientAddress())).append(',');
                Json.field(json, "http", Json.quote(published.getHttpAddress()));
            }
            json.append('}');
            first = false;
        }
        json.append(']');
    }

    private static void writeEvents(StringBuilder json, List<Timeline.Event> events) {
        for (int i = 0; i < events.size(); i++) {
            Timeline.Event e = events.get(i);
            json.append(i == 0 ? "" : ",").append('{');
            Json.field(json, "seq", e.seq()).append(',');
            Json.field(json, "t", e.wallMs()).append(',');
            Json.field(json, "kind", Json.quote(e.kind())).append(',');
            Json.field(json, "term", e.term());
            if (e.role() != null) {
                json.append(',');
                Json.field(json, "role", Json.quote(e.role().name().toLowerCase())).append(',');
                Json.field(json, "leader", e.leader()).append(',');
                Json.field(json, "vote", e.vote());
            } else {
                json.append(',');
                Json.field(json, "text", Json.quote(e.text()));
            }
            json.append('}');
        }
    }

    /** What an entry carries, in a word: "no-op", "put", "txn", "lease_keep_alive", ... */
    private static String kind(Entry e) {
        if (e.type() == Entry.Type.NO_OP) {
            return "no-op";
        }
        if (e.type() == Entry.Type.CONFIGURATION) {
            return "configuration";
        }
        try {
            return Command.parseFrom(e.data()).getOpCase().name().toLowerCase();
        } catch (InvalidProtocolBufferException ex) {
            return "?";
        }
    }
}
