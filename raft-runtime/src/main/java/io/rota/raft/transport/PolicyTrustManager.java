package io.rota.raft.transport;

import io.rota.raft.core.LogText;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.cert.CRL;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A trust manager that checks a chain as its delegate does (it chains to the trusted CA), then as a
 * {@link TlsPolicy} asks: no certificate of the chain is revoked by the CRL (etcd's {@code --client-crl-file}
 * and {@code --peer-crl-file}), and the leaf carries the allowed CN or host name
 * ({@code --client-cert-allowed-cn}, {@code --client-cert-allowed-hostname}, {@code --peer-cert-allowed-cn}).
 * A refusal fails the TLS handshake, and its message (escaped: it quotes the certificate) is what the
 * port logs. Immutable: a reload builds a new one.
 */
public final class PolicyTrustManager extends X509ExtendedTrustManager {

    private final X509ExtendedTrustManager delegate;
    private final TlsPolicy policy;
    /** The CRL, checked against the trusted CAs at load; null without one. */
    private final X509CRL crl;
    /** Whether server certificates are checked too (the peer port: both sides are members). */
    private final boolean checkServers;

    /**
     * @param delegate     checks the chain against the trusted CAs
     * @param policy       what else a certificate must satisfy
     * @param trusted      the trusted CAs: the CRL must be signed by one of them
     * @param checkServers apply the policy to the certificates of servers this side dials as well
     * @throws IllegalArgumentException naming the CRL file when it cannot be read or no trusted CA signed it
     */
    public PolicyTrustManager(X509ExtendedTrustManager delegate, TlsPolicy policy, List<X509Certificate> trusted,
                              boolean checkServers) {
        this.delegate = delegate;
        this.policy = policy;
        this.checkServers = checkServers;
        this.crl = policy.crlFile() == null ? null : loadCrl(policy, trusted);
    }

    private static X509CRL loadCrl(TlsPolicy policy, List<X509Certificate> trusted) {
        try {
            CRL read = CertificateFactory.getInstance("X.509").generateCRL(
                    new java.io.ByteArrayInputStream(Files.readAllBytes(policy.crlFile())));
            X509CRL x509 = (X509CRL) read;
            for (X509Certificate ca : trusted) {
                try {
                    x509.verify(ca.getPublicKey());
                    return x509;
                } catch (GeneralSecurityException notThisCa) {
                    // try the next trusted CA
                }
            }
            throw new IllegalArgumentException("the CRL " + policy.crlFile() + " (issuer " + x509.getIssuerX500Principal()
                    .getName() + ") is not signed by a trusted CA of this port");
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the CRL " + policy.crlFile() + " (PEM or DER X.509 CRL): "
                    + e.getMessage(), e);
        }
    }

    /** Why {@code chain} breaks the policy, or null. */
    String refuse(X509Certificate[] chain) {
        if (chain == null || chain.length == 0) {
            return null;   // the delegate refuses an empty chain
        }
        if (crl != null) {
            for (X509Certificate c : chain) {
                if (c.getIssuerX500Principal().equals(crl.getIssuerX500Principal()) && crl.isRevoked(c)) {
                    return "certificate serial " + c.getSerialNumber().toString(16) + " ("
                            + LogText.escape(c.getSubjectX500Principal().getName()) + ") is revoked by " + policy.crlFile();
                }
            }
        }
        X509Certificate leaf = chain[0];
        if (policy.allowedCn() != null && !policy.allowedCn().equals(TlsContexts.commonName(leaf))) {
            return "the certificate's CN '" + LogText.escape(TlsContexts.commonName(leaf)) + "' is not the allowed CN '"
                    + LogText.escape(policy.allowedCn()) + "'";
        }
        if (policy.allowedHostname() != null && !TlsContexts.alternativeNames(leaf).contains(policy.allowedHostname())) {
            return "the certificate's SANs " + LogText.escape(TlsContexts.alternativeNames(leaf).toString())
                    + " do not name the allowed host '" + LogText.escape(policy.allowedHostname()) + "'";
        }
        return null;
    }

    private void check(X509Certificate[] chain) throws CertificateException {
        String refusal = refuse(chain);
        if (refusal != null) {
            throw new CertificateException(refusal);
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        delegate.checkClientTrusted(chain, authType, socket);
        check(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        delegate.checkClientTrusted(chain, authType, engine);
        check(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        delegate.checkClientTrusted(chain, authType);
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        delegate.checkServerTrusted(chain, authType, socket);
        if (checkServers) {
            check(chain);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        delegate.checkServerTrusted(chain, authType, engine);
        if (checkServers) {
            check(chain);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        delegate.checkServerTrusted(chain, authType);
        if (checkServers) {
            check(chain);
        }
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return delegate.getAcceptedIssuers();
    }
}
