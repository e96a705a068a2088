package io.rota.server;

import io.rota.raft.transport.TlsFiles;
import io.rota.raft.transport.TlsPolicy;
import io.rota.raft.transport.TlsProvider;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The TLS flags of {@code rota server}, in etcd's spelling, checked in flag terms (a refusal is a
 * {@link FlagException} naming the flag). Plaintext on both ports is {@link #NONE}, the default.
 *
 * <p>Client port: {@code --cert-file}/{@code --key-file} turn TLS on; {@code --client-cert-auth} also asks
 * every client for a certificate chaining to {@code --trusted-ca-file}, and refuses the handshake without
 * one. Peer port: {@code --peer-cert-file}, {@code --peer-key-file} and {@code --peer-trusted-ca-file} go
 * together, and peer TLS is always mutual (design X3): the member-name check needs both sides' certificates.
 *
 * @param certFile          client port certificate chain (PEM), or null for a plaintext client port
 * @param keyFile           its private key (PEM, unencrypted PKCS#8)
 * @param trustedCaFile     CA that client certificates must chain to, or null
 * @param clientCertAuth    require a client certificate on the client port
 * @param peerCertFile      this member's peer certificate chain (PEM), or null for a plaintext peer port
 * @param peerKeyFile       its private key
 * @param peerTrustedCaFile the cluster's peer CA
 * @param provider          {@code --tls-provider}: the TLS implementation of both ports
 * @param clientPolicy      the client port's (and the etcd and HTTP ports') versions, suites, CRL and allowed
 *                          client CN/host ({@code --cipher-suites}, {@code --tls-min-version},
 *                          {@code --tls-max-version}, {@code --client-crl-file}, {@code --client-cert-allowed-cn},
 *                          {@code --client-cert-allowed-hostname})
 * @param peerPolicy        the peer port's: the same versions and suites, {@code --peer-crl-file} and
 *                          {@code --peer-cert-allowed-cn}, checked on both sides of a peer connection
 */
public record ServerTls(Path certFile, Path keyFile, Path trustedCaFile, boolean clientCertAuth, Path peerCertFile,
                        Path peerKeyFile, Path peerTrustedCaFile, TlsProvider provider, TlsPolicy clientPolicy,
                        TlsPolicy peerPolicy) {

    /** {@code --tls-provider}'s default, chosen by the TLS cost measurements (docs/performance.md, design X6). */
    public static final TlsProvider DEFAULT_PROVIDER = TlsFiles.DEFAULT_PROVIDER;

    /** Plaintext on both ports. */
    public static final ServerTls NONE = new ServerTls(null, null, null, false, null, null, null, DEFAULT_PROVIDER,
            TlsPolicy.DEFAULT, TlsPolicy.DEFAULT);

    /** Checks the flags alone and together; a refusal names the flag and says how to fix it. */
    public ServerTls {
        provider = provider == null ? DEFAULT_PROVIDER : provider;
        clientPolicy = clientPolicy == null ? TlsPolicy.DEFAULT : clientPolicy;
        peerPolicy = peerPolicy == null ? TlsPolicy.DEFAULT : peerPolicy;
        require(!clientPolicy.checksCertificates() || trustedCaFile != null, clientPolicy.crlFile() != null
                        ? "--client-crl-file" : clientPolicy.allowedCn() != null ? "--client-cert-allowed-cn"
                        : "--client-cert-allowed-hostname",
                "--client-crl-file, --client-cert-allowed-cn and --client-cert-allowed-hostname check client"
                        + " certificates: give --trusted-ca-file (and --client-cert-auth to require one)");
        require(!peerPolicy.checksCertificates() || peerTrustedCaFile != null, peerPolicy.crlFile() != null
                        ? "--peer-crl-file" : "--peer-cert-allowed-cn",
                "--peer-crl-file and --peer-cert-allowed-cn check peer certificates: give the peer TLS flags"
                        + " (--peer-cert-file, --peer-key-file, --peer-trusted-ca-file)");
        readable(clientPolicy.crlFile(), "--client-crl-file");
        readable(peerPolicy.crlFile(), "--peer-crl-file");
        require((certFile == null) == (keyFile == null), certFile == null ? "--cert-file" : "--key-file",
                "--cert-file and --key-file go together (the client port's certificate and its key)");
        require(certFile != null || trustedCaFile == null, "--trusted-ca-file",
                "--trusted-ca-file checks client certificates on a TLS client port: give --cert-file and --key-file too");
        require(!clientCertAuth || trustedCaFile != null, "--client-cert-auth",
                "--client-cert-auth needs --trusted-ca-file: the CA that client certificates must chain to");
        boolean peer = peerCertFile != null || peerKeyFile != null || peerTrustedCaFile != null;
        require(!peer || (peerCertFile != null && peerKeyFile != null && peerTrustedCaFile != null),
                peerCertFile == null ? "--peer-cert-file" : peerKeyFile == null ? "--peer-key-file" : "--peer-trusted-ca-file",
                "--peer-cert-file, --peer-key-file and --peer-trusted-ca-file go together: peer TLS is mutual, every"
                        + " member presents a certificate of the peer CA");
        readable(certFile, "--cert-file");
        readable(keyFile, "--key-file");
        readable(trustedCaFile, "--trusted-ca-file");
        readable(peerCertFile, "--peer-cert-file");
        readable(peerKeyFile, "--peer-key-file");
        readable(peerTrustedCaFile, "--peer-trusted-ca-file");
    }

    /** The client port's files, or null when it is plaintext. */
    public TlsFiles clientFiles() {
        return certFile == null ? null : new TlsFiles(certFile, keyFile, trustedCaFile, clientCertAuth, provider,
                clientPolicy);
    }

    /** The peer port's files (always mutual), or null when it is plaintext. */
    public TlsFiles peerFiles() {
        return peerCertFile == null ? null : new TlsFiles(peerCertFile, peerKeyFile, peerTrustedCaFile, true, provider,
                peerPolicy);
    }

    /** A builder starting from {@link #NONE}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these flags, to change some of them. */
    public Builder toBuilder() {
        return new Builder().clientPort(certFile, keyFile).trustedCaFile(trustedCaFile).clientCertAuth(clientCertAuth)
                .peerPort(peerCertFile, peerKeyFile, peerTrustedCaFile).provider(provider)
                .cipherSuites(clientPolicy.cipherSuites())
                .tlsVersions(clientPolicy.minVersion(), clientPolicy.maxVersion())
                .clientCrlFile(clientPolicy.crlFile()).peerCrlFile(peerPolicy.crlFile())
                .clientCertAllowed(clientPolicy.allowedCn(), clientPolicy.allowedHostname())
                .peerCertAllowedCn(peerPolicy.allowedCn());
    }

    /** Builds {@link ServerTls}; starts from plaintext on both ports. */
    public static final class Builder {
        private Path certFile;
        private Path keyFile;
        private Path trustedCaFile;
        private boolean clientCertAuth;
        private Path peerCertFile;
        private Path peerKeyFile;
        private Path peerTrustedCaFile;
        private TlsProvider provider = DEFAULT_PROVIDER;
        private List<String> cipherSuites = List.of();
        private String minVersion = TlsPolicy.DEFAULT.minVersion();
        private String maxVersion = TlsPolicy.DEFAULT.maxVersion();
        private Path clientCrlFile;
        private Path peerCrlFile;
        private String clientAllowedCn;
        private String clientAllowedHostname;
        private String peerAllowedCn;

        private Builder() {
        }

        /** {@code --cipher-suites}: IANA names for every TLS port; empty for the provider's defaults. */
        public Builder cipherSuites(List<String> cipherSuites) {
            this.cipherSuites = cipherSuites == null ? List.of() : cipherSuites;
            return this;
        }

        /** {@code --tls-min-version}, {@code --tls-max-version} (TLS1.2, TLS1.3); null keeps the default. */
        public Builder tlsVersions(String minVersion, String maxVersion) {
            this.minVersion = minVersion == null ? TlsPolicy.DEFAULT.minVersion() : minVersion;
            this.maxVersion = maxVersion == null ? TlsPolicy.DEFAULT.maxVersion() : maxVersion;
            return this;
        }

        /** {@code --client-crl-file}. */
        public Builder clientCrlFile(Path clientCrlFile) {
            this.clientCrlFile = clientCrlFile;
            return this;
        }

        /** {@code --peer-crl-file}. */
        public Builder peerCrlFile(Path peerCrlFile) {
            this.peerCrlFile = peerCrlFile;
            return this;
        }

        /** {@code --client-cert-allowed-cn}, {@code --client-cert-allowed-hostname}; null for any. */
        public Builder clientCertAllowed(String cn, String hostname) {
            this.clientAllowedCn = cn;
            this.clientAllowedHostname = hostname;
            return this;
        }

        /** {@code --peer-cert-allowed-cn}; null for any. */
        public Builder peerCertAllowedCn(String cn) {
            this.peerAllowedCn = cn;
            return this;
        }

        /** {@code --cert-file}, {@code --key-file}. */
        public Builder clientPort(Path certFile, Path keyFile) {
            this.certFile = certFile;
            this.keyFile = keyFile;
            return this;
        }

        /** {@code --trusted-ca-file}. */
        public Builder trustedCaFile(Path trustedCaFile) {
            this.trustedCaFile = trustedCaFile;
            return this;
        }

        /** {@code --client-cert-auth}. */
        public Builder clientCertAuth(boolean clientCertAuth) {
            this.clientCertAuth = clientCertAuth;
            return this;
        }

        /** {@code --peer-cert-file}, {@code --peer-key-file}, {@code --peer-trusted-ca-file}. */
        public Builder peerPort(Path peerCertFile, Path peerKeyFile, Path peerTrustedCaFile) {
            this.peerCertFile = peerCertFile;
            this.peerKeyFile = peerKeyFile;
            this.peerTrustedCaFile = peerTrustedCaFile;
            return this;
        }

        /** {@code --tls-provider}. */
        public Builder provider(TlsProvider provider) {
            this.provider = provider;
            return this;
        }

        /** The flags; throws {@link FlagException} naming the flag when they do not fit together. */
        public ServerTls build() {
            String min;
            String max;
            try {
                min = TlsPolicy.version(minVersion, "minimum");
            } catch (IllegalArgumentException e) {
                throw new FlagException("--tls-min-version", "--tls-min-version: " + e.getMessage());
            }
            try {
                max = TlsPolicy.version(maxVersion, "maximum");
            } catch (IllegalArgumentException e) {
                throw new FlagException("--tls-max-version", "--tls-max-version: " + e.getMessage());
            }
            TlsPolicy client;
            TlsPolicy peer;
            try {
                client = new TlsPolicy(cipherSuites, min, max, clientCrlFile, clientAllowedCn, clientAllowedHostname,
                        false);
                peer = new TlsPolicy(cipherSuites, min, max, peerCrlFile, peerAllowedCn, null, true);
            } catch (IllegalArgumentException e) {
                String flag = e.getMessage().contains("cipher suite") ? "--cipher-suites" : "--tls-max-version";
                throw new FlagException(flag, flag + ": " + e.getMessage());
            }
            return new ServerTls(certFile, keyFile, trustedCaFile, clientCertAuth, peerCertFile, peerKeyFile,
                    peerTrustedCaFile, provider, client, peer);
        }
    }

    private static void readable(Path file, String flag) {
        require(file == null || Files.isReadable(file), flag, flag + " " + file + " does not exist or cannot be read");
    }

    private static void require(boolean condition, String flag, String message) {
        if (!condition) {
            throw new FlagException(flag, message);
        }
    }
}
