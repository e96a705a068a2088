package io.rota.client;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import java.security.GeneralSecurityException;

/**
 * Builds the client's TLS context from {@link TlsOptions}: the JDK's TLS (no native library for an SDK an
 * application links), host names checked unless switched off.
 */
final class ClientTlsContext {

    private ClientTlsContext() {
    }

    /** The context; a file that cannot be used fails here, when the client is built, not at the first call. */
    static SslContext build(TlsOptions options) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .endpointIdentificationAlgorithm(options.verifyHostname() ? "HTTPS" : null);
            if (options.trustedCaFile() != null) {
                b.trustManager(options.trustedCaFile().toFile());
            } else if (options.trustStore() != null) {
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(options.trustStore());
                b.trustManager(tmf);
            }
            if (options.certFile() != null) {
                b.keyManager(options.certFile().toFile(), options.keyFile().toFile());
            }
            return b.build();
        } catch (SSLException | GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use the TLS settings (" + describe(options) + "): "
                    + e.getMessage(), e);
        }
    }

    private static String describe(TlsOptions o) {
        return "CA " + (o.trustedCaFile() != null ? o.trustedCaFile() : o.trustStore() != null ? "trust store" : "JDK default")
                + (o.certFile() == null ? "" : ", certificate " + o.certFile() + ", key " + o.keyFile());
    }
}
