package io.rota.chaos.net;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.UnaryOperator;

/**
 * A TCP proxy for one directed pair of members: member i dials it instead of member j, and it forwards to
 * j's real peer port. It understands the peer transport's framing (a 4-byte big-endian length, then that many
 * bytes) and forwards whole frames, so it can drop traffic in one direction and leave the stream well framed.
 *
 * <p>Faults: {@link #setForwarding(boolean, boolean)} with both directions off is a partition (open
 * connections are cut and new ones are accepted and closed at once, as a dead route would); one direction off
 * drops that direction's frames on the floor (a one-way partition) while the other flows. Blocking sockets,
 * two threads per connection; the harness controls it in-process.
 *
 * <p>The client protocol has the same framing, so the same proxy stands between clients and a member; there an
 * optional rewrite of the frames coming back lets the answers name proxies instead of members' own addresses
 * ({@link ClientAddresses}).
 */
public final class FaultProxy implements AutoCloseable {

    /** Larger frames than this close the connection: the proxy never buffers more (the transport's max is 1.5 MiB). */
    static final int MAX_FRAME_BYTES = 64 << 20;

    private final String name;
    private final ServerSocket server;
    private final IntSupplier targetPort;
    private final UnaryOperator<byte[]> rewriteDown;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicLong framesDropped = new AtomicLong();
    private volatile boolean forwardUp = true;
    private volatile boolean forwardDown = true;
    private volatile boolean closed;

    /**
     * Listens on 127.0.0.1:{@code port} and starts accepting.
     *
     * @param name       for thread names and logs, e.g. {@code n1->n2}
     * @param port       the port to listen on
     * @param targetPort the real peer port to forward to, read at each new connection
     */
    public FaultProxy(String name, int port, IntSupplier targetPort) {
        this(name, port, targetPort, null);
    }

    /**
     * As {@link #FaultProxy(String, int, IntSupplier)}, rewriting each frame that flows back to the dialler.
     *
     * @param name        for thread names and logs
     * @param port        the port to listen on
     * @param targetPort  the real port to forward to, read at each new connection
     * @param rewriteDown maps a frame's bytes from the dialled side to the bytes forwarded (null: unchanged)
     */
    public FaultProxy(String name, int port, IntSupplier targetPort, UnaryOperator<byte[]> rewriteDown) {
        this.name = name;
        this.targetPort = targetPort;
        this.rewriteDown = rewriteDown;
        try {
            this.server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            throw new UncheckedIOException("proxy " + name + " cannot listen on 127.0.0.1:" + port, e);
        }
        Thread acceptor = new Thread(this::acceptLoop, "proxy-" + name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Sets which directions carry frames. Both off cuts every open connection and refuses new ones.
     *
     * @param up   frames from the dialling member to the dialled one
     * @param down frames from the dialled member back to the dialling one
     */
    public void setForwarding(boolean up, boolean down) {
        forwardUp = up;
        forwardDown = down;
        if (!up && !down) {
            sockets.forEach(FaultProxy::closeQuietly);
        }
    }

    /**
     * Whether both directions flow.
     *
     * @return true when no fault is set
     */
    public boolean isHealthy() {
        return forwardUp && forwardDown;
    }

    /**
     * The port this proxy listens on.
     *
     * @return the local port
     */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Frames dropped so far (both directions).
     *
     * @return the count
     */
    public long framesDropped() {
        return framesDropped.get();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket dialler;
            try {
                dialler = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            if (!forwardUp && !forwardDown) {
                closeQuietly(dialler);
                continue;
            }
            Socket target = new Socket();
            try {
                dialler.setTcpNoDelay(true);
                target.setTcpNoDelay(true);
                target.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort.getAsInt()), 2_000);
            } catch (IOException e) {
                // The target is down (killed, restarting): the dialler sees the connection close and retries.
                closeQuietly(dialler);
                closeQuietly(target);
                continue;
            }
            sockets.add(dialler);
            sockets.add(target);
            pump(dialler, target, true);
            pump(target, dialler, false);
        }
    }

    /** Copies whole frames from {@code from} to {@code to} until either closes; drops them while told to. */
    private void pump(Socket from, Socket to, boolean up) {
        Thread t = new Thread(() -> {
            try {
                DataInputStream in = new DataInputStream(from.getInputStream());
                OutputStream out = to.getOutputStream();
                byte[] buffer = new byte[64 * 1024];
                while (true) {
                    int length = in.readInt();
                    if (length < 0 || length > MAX_FRAME_BYTES) {
                        throw new IOException("frame of " + length + " bytes");
                    }
                    if (length > buffer.length) {
                        buffer = new byte[length];
                    }
                    in.readFully(buffer, 0, length);
                    if (up ? forwardUp : forwardDown) {
                        byte[] frame = buffer;
                        int size = length;
                        if (!up && rewriteDown != null) {
                            frame = rewriteDown.apply(java.util.Arrays.copyOf(buffer, length));
                            size = frame.length;
                        }
                        out.write(new byte[]{(byte) (size >>> 24), (byte) (size >>> 16), (byte) (size >>> 8),
                                (byte) size});
                        out.write(frame, 0, size);
                        out.flush();
                    } else {
                        framesDropped.incrementAndGet();
                    }
                }
            } catch (EOFException | java.net.SocketException e) {
                // closed by a peer, by a partition or by close(): the normal ends
            } catch (IOException e) {
                // a broken stream: cut the connection, the member reconnects
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "proxy-" + name + (up ? "-up" : "-down"));
        t.setDaemon(true);
        t.start();
    }

    /** Stops listening and cuts every connection. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        sockets.forEach(FaultProxy::closeQuietly);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is best effort; the socket is gone either way
        }
    }

    @Override
    public String toString() {
        return "proxy " + name + " (" + (forwardUp ? "up" : "UP DROPPED") + ", " + (forwardDown ? "down" : "DOWN DROPPED") + ")";
    }
}
