package io.rota.server.api;

import io.rota.proto.Frame;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * How a follower hands a client's write to the leader's client port (etcd forwards proposals the same
 * way). A port, so the deterministic simulator can forward between simulated members; {@link NettyForwarder}
 * is the real one.
 */
public interface Forwarder extends AutoCloseable {

    /**
     * Forward {@code frame} (marked as forwarded) to {@code address}, answered or failed within
     * {@code timeout} (the caller's remaining deadline, so a forwarded request never outlives it). The
     * future fails with
     * {@link Unreachable} when the frame was never sent (safe to retry), with another {@link IOException}
     * when the connection broke after sending, or with a TimeoutException — in both last cases the
     * leader may or may not have applied the write.
     */
    CompletableFuture<Frame> forward(String address, Frame frame, Duration timeout);

    @Override
    void close();

    /** The frame was never sent: the leader cannot have applied it. */
    final class Unreachable extends IOException {
        public Unreachable(String message) {
            super(message);
        }
    }
}
