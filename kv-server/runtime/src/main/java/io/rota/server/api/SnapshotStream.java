package io.rota.server.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.channel.Channel;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.ResponseHeader;
import io.rota.proto.SnapshotInfo;
import io.rota.proto.SnapshotResponse;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.CoordinationStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Serves {@code SnapshotRequest} (issue 18, etcd's Maintenance.Snapshot): a consistent image of this member's
 * state machine, streamed to the client in chunks.
 * <ol>
 *   <li>A ReadIndex round (§6.4) first, so the image holds every write acknowledged before the request;</li>
 *   <li>then, on the driver thread between two applies, {@link CoordinationStateMachine#image()} — the same
 *       reference copy a Raft snapshot's capture is, so the driver pauses for a pointer per key;</li>
 *   <li>then, on this member's backup thread, the image is serialized and hashed (SHA-256), and sent: one
 *       response with the {@link SnapshotInfo}, the chunks, one response with {@code done}.</li>
 * </ol>
 * Bounded: one stream at a time per member (another gets UNAVAILABLE), and a chunk is written only when the
 * previous one has left, so a slow client holds one chunk of socket buffer, not the image twice.
 */
public final class SnapshotStream implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SnapshotStream.class);
    /** 1 MiB: well under any client frame limit, large enough that the per-frame cost does not matter. */
    static final int CHUNK_BYTES = 1 << 20;

    private final RaftDriver<CommandResult> driver;
    private final CoordinationStateMachine stateMachine;
    private final ClusterView view;
    private final String clusterId;
    private final String version;
    private final Duration readTimeout;
    private final AtomicBoolean busy = new AtomicBoolean();
    private final ExecutorService thread;

    /**
     * @param clusterId   written into every image's info (a restore names the cluster it came from)
     * @param readTimeout bound on the ReadIndex round before the capture
     */
    public SnapshotStream(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, ClusterView view,
                          String clusterId, String version, Duration readTimeout) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.view = view;
        this.clusterId = clusterId;
        this.version = version;
        this.readTimeout = readTimeout;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "rota-backup-" + view.memberId());
            t.setDaemon(true);
            return t;
        });
    }

    /** What a capture hands from the driver thread to the backup thread. */
    private record Captured(StoreSnapshot image, NodeStatus status) {
    }

    /**
     * Where one snapshot stream goes: the native client port's channel, or the etcd port's gRPC stream
     * (Maintenance.Snapshot). Called from one thread at a time, in stream order.
     */
    public interface Sink {
        /** Send one response; completes when it has left, so the next is written only then (flow control). */
        CompletionStage<?> send(SnapshotResponse response);

        /** Whether the receiver is still there (a closed one ends the stream). */
        boolean isOpen();

        /** End the stream with a typed error instead of the image. */
        void fail(Error error);

        /** Who receives it, for the log. */
        String describe();
    }

    /** Stream a snapshot to {@code channel} under {@code callId}; every outcome is a frame on the channel. */
    void stream(Channel channel, long callId) {
        stream(new Sink() {
            @Override
            public CompletionStage<?> send(SnapshotResponse response) {
                CompletableFuture<Void> sent = new CompletableFuture<>();
                channel.writeAndFlush(Frame.newBuilder().setCallId(callId).setSnapshotResponse(response).build())
                        .addListener(f -> sent.complete(null));
                return sent;
            }

            @Override
            public boolean isOpen() {
                return channel.isActive();
            }

            @Override
            public void fail(Error error) {
                channel.writeAndFlush(Frames.error(callId, error));
            }

            @Override
            public String describe() {
                return String.valueOf(channel.remoteAddress());
            }
        });
    }

    /** Stream a snapshot to {@code sink}; every outcome is a response or a failure on it. */
    public void stream(Sink sink) {
        if (!busy.compareAndSet(false, true)) {
            sink.fail(Frames.error(Error.Code.UNAVAILABLE, "member " + view.memberId()
                    + " is already streaming a snapshot; retry when it is done, or ask another member"));
            return;
        }
        long start = System.nanoTime();
        driver.read(stateMachine::image, readTimeout)
                .thenCombine(driver.status(), Captured::new)
                .thenAcceptAsync(c -> send(sink, c, start), thread)
                .exceptionally(e -> {
                    busy.set(false);
                    log.warn("snapshot for {} failed before streaming: {}", sink.describe(), e.toString());
                    sink.fail(Errors.of(e, view));
                    return null;
                });
    }

    private void send(Sink sink, Captured c, long start) {
        // Issue 33: a backup never holds the token key, so no reader of the file can mint tokens; a cluster
        // restored from it draws a new key (TokenKeyKeeper).
        byte[] image = backupImage(c.image()).toByteArray();
        SnapshotInfo info = SnapshotInfo.newBuilder()
                .setRevision(c.image().getRevision()).setAppliedIndex(c.image().getAppliedIndex())
                .setAppliedTerm(c.image().getAppliedTerm()).setClusterId(clusterId).setMemberId(view.memberId())
                .addAllVoters(c.status().configuration().voters().stream().sorted().toList())
                .addAllLearners(c.status().configuration().learners().stream().sorted().toList())
                .addAllMembers(c.image().getMembersList())
                .setImageBytes(image.length).setImageSha256(ByteString.copyFrom(sha256(image)))
                .setKeyCount(c.image().getKvsCount()).setLeaseCount(c.image().getLeasesCount())
                .setVersion(version).setCreatedUnixMs(System.currentTimeMillis()).build();
        ResponseHeader header = ResponseHeader.newBuilder().setRevision(info.getRevision())
                .setRaftTerm(view.term()).setMemberId(view.memberId()).build();
        log.info("streaming a snapshot to {}: revision {}, applied {}@{}, {} keys, {} bytes", sink.describe(),
                info.getRevision(), info.getAppliedIndex(), info.getAppliedTerm(), info.getKeyCount(), image.length);
        sink.send(SnapshotResponse.newBuilder().setHeader(header).setInfo(info).build())
                .whenComplete((v, e) -> next(sink, header, image, 0, start));
    }

    /** Writes the chunk at {@code offset} once the previous response has left (flow control), then the next. */
    /** {@code image} as a backup holds it: without the auth token key. */
    static StoreSnapshot backupImage(StoreSnapshot image) {
        return image.getAuth().getTokenKey().isEmpty() ? image
                : image.toBuilder().setAuth(io.rota.server.auth.AuthStore.withoutTokenKey(image.getAuth())).build();
    }

    private void next(Sink sink, ResponseHeader header, byte[] image, int offset, long start) {
        if (!sink.isOpen()) {
            busy.set(false);
            log.warn("snapshot stream to {} ended early: the receiver went away", sink.describe());
            return;
        }
        if (offset >= image.length) {
            sink.send(SnapshotResponse.newBuilder().setHeader(header).setDone(true).build());
            busy.set(false);
            log.info("snapshot of {} bytes streamed to {} in {} ms", image.length, sink.describe(),
                    (System.nanoTime() - start) / 1_000_000);
            return;
        }
        int n = Math.min(CHUNK_BYTES, image.length - offset);
        // The image is never changed after serialization: wrapping it instead of copying is safe.
        ByteString chunk = UnsafeByteOperations.unsafeWrap(image, offset, n);
        sink.send(SnapshotResponse.newBuilder().setHeader(header).setChunk(chunk).build())
                .whenComplete((v, e) -> next(sink, header, image, offset + n, start));
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
