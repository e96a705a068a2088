package io.rota.raft.transport;

import io.rota.raft.core.LogText;

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
     * CN (the last CN, when the subject has several: {@link TlsContexts#commonName}) or as a DNS subject
     * alternative name. An IP SAN never counts, even when its text equals the name: it names an address, and
     * a certificate issued for an address must not pass for a member. Not the host (etcd's rule): members on
     * one host share its address, so a host name cannot tell them apart. What the certificate says is
     * {@linkplain LogText#escape escaped} in the refusal, which is logged.
     *
     * @param names the member name of an id, or null for an id with no known name (refused)
     */
    static PeerIdentity byMemberName(LongFunction<String> names) {
        return (claimedId, certificate) -> {
            String name = names.apply(claimedId);
            String cn = TlsContexts.commonName(certificate);
            List<String> dns = TlsContexts.dnsNames(certificate);
            if (name != null && (name.equals(cn) || dns.contains(name))) {
                return null;
            }
            List<String> presented = new ArrayList<>();
            presented.add("CN=" + LogText.escape(cn));
            presented.add("SAN " + LogText.escape(TlsContexts.alternativeNames(certificate).toString()));
            return "it claims to be member " + claimedId + (name == null ? " (a member this node has no name for)"
                    : " (" + name + ")") + " but its certificate names " + String.join(", ", presented)
                    + (name == null ? "" : ": a member's certificate must carry its member name as CN or DNS SAN");
        };
    }
}
