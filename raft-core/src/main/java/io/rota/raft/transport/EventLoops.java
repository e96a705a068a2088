package io.rota.raft.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a member chooses its Netty transport: the native epoll transport where it loads (Linux
 * x86-64), the JDK's NIO elsewhere. Why epoll: a hand-off from the driver to an event loop is a wake-up, and
 * the JDK selector's {@code wakeup()} writes its eventfd inside a monitor that the loop it woke asks for at
 * once, so the two threads collide on it (JFR's {@code jdk.JavaMonitorEnter} in
 * {@code EPollSelectorImpl.clearInterrupt}); Netty's epoll loop is woken by an eventfd write behind an atomic
 * flag. Netty's own {@code -Dio.netty.transport.noNative=true} turns epoll off (NIO then, as before).
 *
 * <p>A group and the channels registered on it must come from the same transport: build both here.
 */
public final class EventLoops {

    private static final Logger log = LoggerFactory.getLogger(EventLoops.class);
    private static final boolean EPOLL = Epoll.isAvailable();

    static {
        if (EPOLL) {
            log.debug("Netty transport: native epoll");
        } else {
            log.debug("Netty transport: JDK NIO (native epoll unavailable: {})", Epoll.unavailabilityCause().toString());
        }
    }

    private EventLoops() {
    }

    /** True when the native epoll transport is in use. */
    public static boolean epoll() {
        return EPOLL;
    }

    /** An event loop group of {@code threads} threads on the chosen transport. */
    public static EventLoopGroup group(int threads) {
        IoHandlerFactory handlers = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, handlers);
    }

    /** The listening channel type for a group made by {@link #group}. */
    public static Class<? extends ServerSocketChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** The connecting channel type for a group made by {@link #group}. */
    public static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
