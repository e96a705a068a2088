package io.rota.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/** Free TCP ports on 127.0.0.1 for test clusters, proxies and servers started by tests. */
public final class Ports {

    /** Every port handed out by this JVM: two callers never get the same one. */
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private Ports() {
    }

    /**
     * A port that is free now, chosen below the kernel's ephemeral range (32768+ here): a port from that
     * range, freed and reused a moment later, can meanwhile become the source port of one of the many
     * outgoing peer connections, and the server's bind then fails. Ports are never handed out twice.
     *
     * @return a port on 127.0.0.1 that nobody was listening on a moment ago
     */
    public static synchronized int freePort() {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(15_000, 32_000);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException taken) {
                // in use by someone else: try another
            }
        }
        throw new UncheckedIOException(new IOException("no free port found in 15000-31999"));
    }
}
