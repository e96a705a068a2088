package io.rota.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The client's two threads and whether it is closed. The event loop does the I/O and the timers (retry
 * backoffs, keep-alives, watch reopens) and never runs application code; the callback thread runs the
 * application's listeners in submission order, so a slow listener delays other listeners, never I/O.
 */
final class ClientThreads {

    /** One Netty event loop: every connection of the client, and its timers. */
    final EventLoopGroup eventLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final ExecutorService callbacks = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rota-client-callbacks");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;

    /** Runs {@code task} after {@code delayMs} on the event loop; false if the client is closing. */
    boolean schedule(Runnable task, long delayMs) {
        if (closed) {
            return false;
        }
        try {
            eventLoop.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            return true;
        } catch (RuntimeException rejected) {
            return false;
        }
    }

    /** Runs a listener callback on the callback thread (in submission order; it may block). */
    void callback(Runnable task) {
        try {
            callbacks.execute(task);
        } catch (RuntimeException rejected) {
            // the client is closed: nobody listens any more
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * The first step of closing: from now on {@link #schedule} refuses and calls fail at once. Set before
     * the client fails the calls waiting out a backoff, so each such call sees one or the other.
     */
    void markClosed() {
        closed = true;
    }

    /** The last step of closing: stop the callback thread and the event loop (its scheduled tasks are dropped). */
    void shutdown() {
        closed = true;
        callbacks.shutdown();
        eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
