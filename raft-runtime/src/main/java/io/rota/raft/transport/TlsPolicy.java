package io.rota.raft.transport;

import javax.net.ssl.SSLContext;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * etcd's TLS knobs for one port (issue 33, item 8): which protocol versions and cipher suites it speaks, a
 * CRL whose revoked certificates it refuses, and the CN or host name the other side's certificate must carry.
 * Applied by {@link TlsContexts} (and the etcd port's own contexts) at every handshake; the CRL file is
 * reloaded with the other files. {@link #DEFAULT} changes nothing.
 *
 * @param cipherSuites    IANA names (etcd's {@code --cipher-suites}); empty: the provider's defaults
 * @param minVersion      lowest protocol version, {@code TLSv1.2} or {@code TLSv1.3}
 * @param maxVersion      highest protocol version, at least {@code minVersion}
 * @param crlFile         a PEM or DER CRL of the CA the other side's certificate chains to, or null
 * @param allowedCn       the other side's certificate must have this CN (the last CN), or null for any
 * @param allowedHostname the other side's certificate must carry this DNS (or IP) SAN, or null for any
 * @param serversToo      the checks apply to the certificates of servers this side dials too (the peer port,
 *                        where both sides are members), not only to clients' certificates
 */
public record TlsPolicy(List<String> cipherSuites, String minVersion, String maxVersion, Path crlFile,
                        String allowedCn, String allowedHostname, boolean serversToo) {

    /** The versions a port may speak, oldest first (before {@link #DEFAULT}, which its constructor reads). */
    private static final List<String> VERSIONS = List.of("TLSv1.2", "TLSv1.3");

    /** TLS 1.2 and 1.3 (etcd's default minimum is 1.2), the provider's suites, no CRL, any certificate. */
    public static final TlsPolicy DEFAULT = new TlsPolicy(List.of(), "TLSv1.2", "TLSv1.3", null, null, null,
            false);

    /** Checks the versions and every suite name; a refusal names the bad value and what is allowed. */
    public TlsPolicy {
        cipherSuites = List.copyOf(cipherSuites == null ? List.of() : cipherSuites);
        minVersion = version(minVersion == null ? "TLSv1.2" : minVersion, "minimum");
        maxVersion = version(maxVersion == null ? "TLSv1.3" : maxVersion, "maximum");
        if (VERSIONS.indexOf(maxVersion) < VERSIONS.indexOf(minVersion)) {
            throw new IllegalArgumentException("the maximum TLS version " + maxVersion + " is below the minimum "
                    + minVersion);
        }
        Set<String> known = supportedSuites();
        for (String suite : cipherSuites) {
            if (!known.contains(suite)) {
                throw new IllegalArgumentException("unknown or unsupported cipher suite '" + suite + "': give IANA"
                        + " names such as TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 or TLS_AES_128_GCM_SHA256");
            }
        }
    }

    /** {@code TLS1.2}, {@code TLSv1.2} or {@code 1.2} (and 1.3) as the JDK's name; anything else is refused. */
    public static String version(String given, String which) {
        Objects.requireNonNull(given, which);
        String v = given.trim().toUpperCase(java.util.Locale.ROOT).replace("TLSV", "").replace("TLS", "");
        return switch (v) {
            case "1.2" -> "TLSv1.2";
            case "1.3" -> "TLSv1.3";
            default -> throw new IllegalArgumentException("unknown " + which + " TLS version '" + given
                    + "': TLS1.2 or TLS1.3");
        };
    }

    /** The protocol versions from {@link #minVersion} to {@link #maxVersion}. */
    public String[] protocols() {
        return VERSIONS.subList(VERSIONS.indexOf(minVersion), VERSIONS.indexOf(maxVersion) + 1).toArray(new String[0]);
    }

    /**
     * The suites to enable, or null for the provider's defaults. With TLS 1.3 allowed and only TLS 1.2 suites
     * named, TLS 1.3's own suites are kept (as Go and etcd do: {@code --cipher-suites} covers TLS 1.2 only).
     */
    public List<String> enabledSuites() {
        if (cipherSuites.isEmpty()) {
            return null;
        }
        List<String> out = new ArrayList<>(cipherSuites);
        if (Arrays.asList(protocols()).contains("TLSv1.3") && cipherSuites.stream().noneMatch(s -> s.startsWith("TLS_AES")
                || s.startsWith("TLS_CHACHA20"))) {
            out.addAll(List.of("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"));
        }
        return out;
    }

    /** Whether this policy checks the other side's certificate beyond its chain (a CRL, a CN, a host name). */
    public boolean checksCertificates() {
        return crlFile != null || allowedCn != null || allowedHostname != null;
    }

    private static Set<String> supportedSuites() {
        try {
            return Set.of(SSLContext.getDefault().getSupportedSSLParameters().getCipherSuites());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no default TLS context", e);
        }
    }
}
