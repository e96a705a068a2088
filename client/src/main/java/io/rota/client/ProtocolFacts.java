package io.rota.client;

import io.rota.proto.facts.HostPort;
import io.rota.proto.facts.MemberName;

/**
 * The cluster's own checks of a member's address and name, for tools that take them from a user (rotactl,
 * an operator's script): the same parser the leader and apply use (issue 30), so what passes here is what the
 * cluster accepts, and a refusal names the field in one line.
 */
public final class ProtocolFacts {

    private ProtocolFacts() {
    }

    /**
     * {@code value} as the member tables keep it, {@code host:port} ({@code [v6]:port}); an etcd-style URL's
     * scheme is dropped.
     *
     * @throws IllegalArgumentException naming {@code field} and what is wrong, e.g. "--peer-urls 'n4:71010':
     *                                  port 71010 is out of range 1–65535"
     */
    public static String hostPort(String field, String value) {
        return HostPort.parse(field, value).toString();
    }

    /**
     * {@code name} when it is a member name (1–63 letters, digits, '_', '.', '-').
     *
     * @throws IllegalArgumentException naming {@code field} and what is wrong
     */
    public static String memberName(String field, String name) {
        return MemberName.check(field, name);
    }
}
