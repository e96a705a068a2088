package io.rota.server.watch;

import io.netty.channel.Channel;
import io.rota.proto.Frame;

/**
 * Where one {@link WatchStream} writes: a client connection of the native protocol (a Netty channel) or a
 * gRPC stream of etcd's API. Every method but {@link #execute} is called from the sink's own thread, the
 * one {@link #execute} runs tasks on, one at a time — so a stream needs no locks.
 */
public interface WatchSink {

    /** Whether the peer takes more now; a full sink leaves responses queued in their bounded watchers. */
    boolean isWritable();

    /** Queue one response frame (its call id names the watch's create request). */
    void write(Frame frame);

    /** Send what {@link #write} queued. */
    void flush();

    /** Run {@code task} on the sink's thread (any thread may call this). */
    void execute(Runnable task);

    /** A Netty channel: its event loop is the sink's thread, its writability the flow control. */
    static WatchSink of(Channel channel) {
        return new WatchSink() {
            @Override
            public boolean isWritable() {
                return channel.isWritable();
            }

            @Override
            public void write(Frame frame) {
                channel.write(frame);
            }

            @Override
            public void flush() {
                channel.flush();
            }

            @Override
            public void execute(Runnable task) {
                channel.eventLoop().execute(task);
            }
        };
    }
}
