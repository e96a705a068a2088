package io.rota.client;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

/**
 * TLS settings of a {@link RotaClient} ({@link RotaClient.Builder#tls}): whom to trust, and the client
 * certificate to present when the cluster asks for one ({@code --client-cert-auth}: its CN then names the
 * client). Plain Java types only — paths and {@link KeyStore}s — so an application configures TLS without
 * touching the client's networking library. Built with {@link #builder()}; {@link #toBuilder()} derives a
 * changed copy. The files are read when the client is built; a later change needs a new client.
 *
 * @param trustedCaFile   CA certificates (PEM) the members' certificates must chain to, or null
 * @param trustStore      a trust store with those CA certificates, or null; with neither, the JDK's default
 *                        trust store (public CAs) is used
 * @param certFile        the client certificate chain (PEM), or null for none
 * @param keyFile         its private key (PEM, unencrypted PKCS#8: {@code BEGIN PRIVATE KEY}); with {@code certFile}
 * @param verifyHostname  whether a member's certificate must name the host this client dialled (its DNS or IP
 *                        subject alternative names). On by default, as HTTPS does: without it, anyone holding
 *                        a certificate of the same CA can pose as a member
 */
public record TlsOptions(Path trustedCaFile, KeyStore trustStore, Path certFile, Path keyFile,
                         boolean verifyHostname) {

    /** Host names are checked unless switched off. */
    public static final boolean DEFAULT_VERIFY_HOSTNAME = true;

    /**
     * Checks the settings: at most one trust source, a certificate with its key, files that exist.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public TlsOptions {
        if (trustedCaFile != null && trustStore != null) {
            throw new IllegalArgumentException("give trustedCaFile or trustStore, not both");
        }
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("a client certificate needs its key: give certFile and keyFile together");
        }
        for (Path p : new Path[]{trustedCaFile, certFile, keyFile}) {
            if (p != null && !Files.isReadable(p)) {
                throw new IllegalArgumentException(p + " does not exist or cannot be read");
            }
        }
    }

    /**
     * Starts configuring TLS: trusting the JDK's default CAs, no client certificate, host names checked.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding these settings, to change some of them.
     *
     * @return a builder with these settings
     */
    public Builder toBuilder() {
        Builder b = new Builder().verifyHostname(verifyHostname);
        b.trustedCaFile = trustedCaFile;
        b.trustStore = trustStore;
        b.certFile = certFile;
        b.keyFile = keyFile;
        return b;
    }

    /** Configures {@link TlsOptions}. */
    public static final class Builder {
        private Path trustedCaFile;
        private KeyStore trustStore;
        private Path certFile;
        private Path keyFile;
        private boolean verifyHostname = DEFAULT_VERIFY_HOSTNAME;

        private Builder() {
        }

        /**
         * Trust the CA certificates in this PEM file (rotactl's {@code --cacert}).
         *
         * @param file a PEM file of one or more CA certificates
         * @return this builder
         */
        public Builder trustedCaFile(Path file) {
            this.trustedCaFile = file;
            return this;
        }

        /**
         * Trust the certificates in this key store instead of a PEM file.
         *
         * @param store a loaded trust store
         * @return this builder
         */
        public Builder trustStore(KeyStore store) {
            this.trustStore = store;
            return this;
        }

        /**
         * Present this certificate when a member asks for one (rotactl's {@code --cert} and {@code --key}).
         *
         * @param certFile the certificate chain (PEM)
         * @param keyFile  its private key (PEM, unencrypted PKCS#8)
         * @return this builder
         */
        public Builder clientCertificate(Path certFile, Path keyFile) {
            this.certFile = certFile;
            this.keyFile = keyFile;
            return this;
        }

        /**
         * Whether a member's certificate must name the host dialled (default true). Switch it off only for
         * members reached by addresses their certificates do not carry, and only on a network you trust.
         *
         * @param verify false to accept any certificate of a trusted CA
         * @return this builder
         */
        public Builder verifyHostname(boolean verify) {
            this.verifyHostname = verify;
            return this;
        }

        /**
         * The settings.
         *
         * @return the TLS options
         * @throws IllegalArgumentException when they do not fit together or a file cannot be read
         */
        public TlsOptions build() {
            return new TlsOptions(trustedCaFile, trustStore, certFile, keyFile, verifyHostname);
        }
    }
}
