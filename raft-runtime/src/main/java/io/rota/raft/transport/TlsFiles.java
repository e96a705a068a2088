package io.rota.raft.transport;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The PEM files of one TLS port: this side's certificate chain and private key, and the CA certificates it
 * trusts for the other side's certificate. Read by {@link TlsContexts}, which reloads them when they change.
 *
 * @param certFile          this side's certificate chain (PEM, leaf first)
 * @param keyFile           the leaf certificate's private key (PEM, unencrypted PKCS#8: {@code BEGIN PRIVATE KEY})
 * @param trustedCaFile     CA certificates (PEM, one or more) the other side's certificate must chain to, or
 *                          null: the JDK's default trust store (a server with it asks for no client certificate)
 * @param requireClientCert a server asks every client for a certificate chaining to {@code trustedCaFile} and
 *                          refuses the handshake without one (mutual TLS)
 * @param provider          the TLS implementation
 * @param policy            versions, cipher suites, CRL and allowed CN/host of the other side (etcd's knobs)
 */
public record TlsFiles(Path certFile, Path keyFile, Path trustedCaFile, boolean requireClientCert,
                       TlsProvider provider, TlsPolicy policy) {

    /** The JDK provider: measured against OpenSSL in docs/performance.md, "TLS cost" (design X6). */
    public static final TlsProvider DEFAULT_PROVIDER = TlsProvider.JDK;

    /** Checks the fields: both halves of the key pair, a CA to check client certificates against. */
    public TlsFiles {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(provider, "provider");
        policy = policy == null ? TlsPolicy.DEFAULT : policy;
        if (requireClientCert && trustedCaFile == null) {
            throw new IllegalArgumentException("requireClientCert needs trustedCaFile: the CA client certificates"
                    + " must chain to");
        }
        if (policy.checksCertificates() && trustedCaFile == null) {
            throw new IllegalArgumentException("a CRL or an allowed CN/host name checks the other side's"
                    + " certificate: it needs trustedCaFile");
        }
    }

    /** The files with {@link TlsPolicy#DEFAULT}. */
    public TlsFiles(Path certFile, Path keyFile, Path trustedCaFile, boolean requireClientCert, TlsProvider provider) {
        this(certFile, keyFile, trustedCaFile, requireClientCert, provider, TlsPolicy.DEFAULT);
    }
}
