package io.rota.server.http;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Who may talk to the HTTP port from where (docs/security.md, "The HTTP port"; design SD10–SD13).
 *
 * @param hostAllowlist  {@code --http-host-allowlist}: the names a request's Host header may carry (against DNS
 *                       rebinding, etcd's {@code --host-whitelist}); empty means the defaults of
 *                       {@link #hosts}; {@code *} turns the check off
 * @param corsOrigins    {@code --http-cors-origin}: browser origins besides this cluster's members' own HTTP
 *                       addresses that may read the dashboard's JSON and event stream; none by default
 * @param maxConnections {@code --http-max-connections}: open connections past this are closed on accept
 */
public record HttpPolicy(List<String> hostAllowlist, List<String> corsOrigins, int maxConnections) {

    /** A dashboard or two per operator, a scraper and probes: far below what a member can afford. */
    public static final int DEFAULT_MAX_CONNECTIONS = 256;
    /** Names every member answers to: a browser on the member's own machine. */
    static final List<String> LOOPBACK_HOSTS = List.of("localhost", "127.0.0.1", "::1");
    public static final HttpPolicy DEFAULT = new HttpPolicy(List.of(), List.of(), DEFAULT_MAX_CONNECTIONS);

    public HttpPolicy {
        hostAllowlist = List.copyOf(hostAllowlist);
        corsOrigins = List.copyOf(corsOrigins);
        if (maxConnections < 1) {
            throw new IllegalArgumentException("--http-max-connections must be at least 1, got " + maxConnections);
        }
    }

    /**
     * The Host names this member accepts, lower case, or null when the check is off ({@code *}).
     *
     * @param ownHosts the hosts this member listens on and advertises (client, peer, HTTP, etcd ports), used
     *                 with the loopback names when no list was given
     */
    Set<String> hosts(Collection<String> ownHosts) {
        if (hostAllowlist.contains("*")) {
            return null;
        }
        Set<String> hosts = new LinkedHashSet<>();
        (hostAllowlist.isEmpty() ? concat(LOOPBACK_HOSTS, ownHosts) : hostAllowlist)
                .forEach(h -> hosts.add(bare(h)));
        return Set.copyOf(hosts);
    }

    private static List<String> concat(List<String> a, Collection<String> b) {
        List<String> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** A host name as the Host check compares it: lower case, without IPv6 brackets. */
    static String bare(String host) {
        String h = host.strip().toLowerCase(Locale.ROOT);
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }
}
