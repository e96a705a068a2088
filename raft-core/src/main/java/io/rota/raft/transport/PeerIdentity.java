package io.rota.raft.transport;

import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * Whether a peer's certificate identifies the member its handshake claims to be (mutual TLS on the peer
 * port). The TLS handshake has already checked that the certificate chains to the peer CA; this check stops
 * one member, holding a good certificate of its own, from speaking as another (a vote or an append under
 * someone else's id). Called on event loops: must not block.
 */
@FunctionalInterface
public interface PeerIdentity {

    /**
     * Why {@code certificate} does not identify member {@code claimedId}, naming both identities; or null
     * when it does.
     */
    String refuse(long claimedId, X509Certificate certificate);

    /**
     * The member-name rule (design X2): the certificate must carry the claimed member's name as its subject
     * CN or as a DNS subject alternative name. Not the host (etcd's rule): members on one host share its
     * address, so a host name cannot tell them apart.
     *
     * @param names the member name of an id, or null for an id with no known name (refused)
     */
    static PeerIdentity byMemberName(LongFunction<String> names) {
        return (claimedId, certificate) -> {
            String name = names.apply(claimedId);
            String cn = TlsContexts.commonName(certificate);
            List<String> sans = TlsContexts.alternativeNames(certificate);
            if (name != null && (name.equals(cn) || sans.contains(name))) {
                return null;
            }
            List<String> presented = new ArrayList<>();
            presented.add("CN=" + cn);
            presented.add("SAN " + sans);
            return "it claims to be member " + claimedId + (name == null ? " (a member this node has no name for)"
                    : " (" + name + ")") + " but its certificate names " + String.join(", ", presented)
                    + (name == null ? "" : ": a member's certificate must carry its member name as CN or DNS SAN");
        };
    }
}
