package io.rota.server.bench;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.rota.raft.transport.TlsContexts;
import io.rota.raft.transport.TlsFiles;
import io.rota.raft.transport.TlsProvider;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * The CPU one TLS record costs, per provider: a client and a server {@code SSLEngine} from the server's own
 * {@link TlsContexts} shake hands in memory, then the client seals and the server opens records the size of
 * a client write frame, and the answer goes back. Measured as this thread's CPU time (not wall time), so the
 * other processes of a loaded machine hardly move it; several rounds, providers interleaved.
 *
 * <pre>TlsEngineBench CA CERT KEY [records per round] [rounds]</pre>
 *
 * (scripts/cluster.sh start --tls leaves a CA and a member's certificate in data/tls.)
 */
public final class TlsEngineBench {

    /** A put of a 256-byte value with its key and envelope, about what WriteBench sends. */
    private static final int REQUEST_BYTES = 320;
    /** Its answer (a header and a revision). */
    private static final int RESPONSE_BYTES = 40;

    private TlsEngineBench() {
    }

    public static void main(String[] args) throws Exception {
        Path ca = Path.of(args[0]);
        Path cert = Path.of(args[1]);
        Path key = Path.of(args[2]);
        int records = args.length > 3 ? Integer.parseInt(args[3]) : 200_000;
        int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 3;
        System.out.println("OpenSSL available: " + OpenSsl.isAvailable() + (OpenSsl.isAvailable()
                ? " (" + OpenSsl.versionString() + ")" : " (" + OpenSsl.unavailabilityCause() + ")"));
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        for (int round = 0; round <= rounds; round++) {
            for (TlsProvider provider : TlsProvider.values()) {
                TlsContexts tls = TlsContexts.load(new TlsFiles(cert, key, ca, true, provider), List.of(), false, "bench");
                SSLEngine client = engine(tls.client(), true);
                SSLEngine server = engine(tls.server(), false);
                handshake(client, server);
                long before = cpu.getCurrentThreadCpuTime();
                long wallBefore = System.nanoTime();
                exchange(client, server, round == 0 ? records / 10 : records);
                long used = cpu.getCurrentThreadCpuTime() - before;
                long wall = System.nanoTime() - wallBefore;
                if (round > 0) {   // round 0 warms the JIT up
                    System.out.printf("| %s | %d | %s | %,.2f µs | %,.2f µs |%n", provider.name().toLowerCase(),
                            round, client.getSession().getCipherSuite(), used / 1e3 / records, wall / 1e3 / records);
                }
            }
        }
    }

    private static SSLEngine engine(SslContext context, boolean client) {
        SSLEngine e = context.newEngine(ByteBufAllocator.DEFAULT);
        e.setUseClientMode(client);
        return e;
    }

    /** The in-memory handshake: each side's wrap output is the other's unwrap input until both finish. */
    private static void handshake(SSLEngine client, SSLEngine server) throws SSLException {
        ByteBuffer toServer = ByteBuffer.allocate(1 << 17);
        ByteBuffer toClient = ByteBuffer.allocate(1 << 17);
        ByteBuffer app = ByteBuffer.allocate(1 << 17);
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 1000 && !(done(client) && done(server)); i++) {
            step(client, toClient, toServer, app);
            step(server, toServer, toClient, app);
        }
        if (!(done(client) && done(server))) {
            throw new SSLException("handshake did not finish: " + client.getHandshakeStatus() + "/"
                    + server.getHandshakeStatus());
        }
        // Records sent after the handshake (TLS 1.3 session tickets) must be read, or the next record's
        // sequence number does not match.
        for (int i = 0; i < 10 && (toClient.position() > 0 || toServer.position() > 0); i++) {
            step(client, toClient, toServer, app);
            step(server, toServer, toClient, app);
        }
    }

    private static boolean done(SSLEngine e) {
        SSLEngineResult.HandshakeStatus s = e.getHandshakeStatus();
        return s == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING || s == SSLEngineResult.HandshakeStatus.FINISHED;
    }

    private static void step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer app) throws SSLException {
        switch (e.getHandshakeStatus()) {
            case NEED_WRAP:
                e.wrap(ByteBuffer.allocate(0), out);
                break;
            case NEED_UNWRAP:
            case NEED_UNWRAP_AGAIN:
                in.flip();
                e.unwrap(in, app);
                in.compact();
                app.clear();
                break;
            case NEED_TASK:
                Runnable task;
                while ((task = e.getDelegatedTask()) != null) {
                    task.run();
                }
                break;
            default:
                if (in.position() > 0) {   // late handshake messages (TLS 1.3 tickets)
                    in.flip();
                    e.unwrap(in, app);
                    in.compact();
                    app.clear();
                }
        }
    }

    /** {@code n} request records client to server, and an answer record back for each. */
    private static void exchange(SSLEngine client, SSLEngine server, int n) throws SSLException {
        ByteBuffer request = ByteBuffer.allocate(REQUEST_BYTES);
        ByteBuffer response = ByteBuffer.allocate(RESPONSE_BYTES);
        ByteBuffer net = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
        ByteBuffer app = ByteBuffer.allocate(client.getSession().getApplicationBufferSize());
        for (int i = 0; i < n; i++) {
            transfer(client, server, request, net, app);
            transfer(server, client, response, net, app);
        }
    }

    private static void transfer(SSLEngine from, SSLEngine to, ByteBuffer plain, ByteBuffer net, ByteBuffer app)
            throws SSLException {
        plain.clear();
        net.clear();
        from.wrap(plain, net);
        net.flip();
        app.clear();
        while (net.hasRemaining()) {
            SSLEngineResult r = to.unwrap(net, app);
            if (r.bytesProduced() == 0 && r.bytesConsumed() == 0) {
                throw new SSLException("unwrap made no progress: " + r);
            }
        }
    }
}
