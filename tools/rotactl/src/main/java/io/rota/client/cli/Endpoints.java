package io.rota.client.cli;

import io.rota.client.ProtocolFacts;

import java.util.ArrayList;
import java.util.List;

/**
 * Endpoint lists as users write them ({@code host:port,host:port}) and the ports of scripts/cluster.sh's local
 * cluster (client ports {@code ROTA_BASE_PORT} + 1..3, base 7000); {@link EndpointSource} decides which applies.
 */
final class Endpoints {

    /** scripts/cluster.sh's default base port: clients listen on base + 1, + 2, + 3. */
    static final int DEFAULT_BASE_PORT = 7000;
    private static final int MEMBERS = 3;

    private Endpoints() {
    }

    /** scripts/cluster.sh's client endpoints for {@code basePort} (null: the default base). */
    static List<String> local(String basePort) {
        int base = DEFAULT_BASE_PORT;
        if (basePort != null && !basePort.isBlank()) {
            try {
                base = Integer.parseInt(basePort.trim());
            } catch (NumberFormatException e) {
                base = -1;
            }
            if (base <= 0 || base + MEMBERS > 65_535) {
                throw new IllegalArgumentException("ROTA_BASE_PORT must be a port number (got '" + basePort + "')");
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= MEMBERS; i++) {
            out.add("127.0.0.1:" + (base + i));
        }
        return out;
    }

    /**
     * Parses a comma-separated {@code host:port} list.
     *
     * @param list   the list
     * @param source where it came from, for the error message
     * @return the entries, trimmed, in order
     * @throws IllegalArgumentException if it is empty or an entry is not {@code host:port}
     */
    static List<String> parse(String list, String source) {
        List<String> out = new ArrayList<>();
        for (String raw : list.split(",", -1)) {
            String e = raw.trim();
            if (e.isEmpty()) {
                continue;
            }
            if (e.contains("://")) {
                throw new IllegalArgumentException(source + ": '" + e + "' is a URL; give host:port, e.g. 127.0.0.1:7001");
            }
            ProtocolFacts.hostPort(source, e);   // the cluster's own parser (issue 30); the message names the source
            out.add(e);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(source + " is empty; give host:port[,host:port...], e.g. 127.0.0.1:7001");
        }
        return List.copyOf(out);
    }
}
