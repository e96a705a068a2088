package io.rota.raft.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The TLS contexts of one port, built from its {@link TlsFiles} and rebuilt when those files change
 * (certificate rotation without a restart). {@link #server()} serves accepted connections, {@link #client()}
 * dials (the peer port uses both: the lower id dials). Each new connection takes the contexts current at its
 * start; connections already open keep the certificate they shook hands with.
 *
 * <p>Rotation: after {@link #startReloading()}, a daemon thread reads the files every
 * {@link #RELOAD_INTERVAL_MILLIS} and compares a SHA-256 of their bytes with the loaded ones. Changed files are
 * loaded and checked (the key must sign what the certificate verifies) before they replace the contexts, and
 * the swap is logged with the new certificate's serial. A half-written rotation — a new certificate beside
 * the old key — fails that check, is logged once, and the old contexts stay until the files agree again.
 */
public final class TlsContexts implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);

    /** How often the files are compared with the loaded ones: a rotation is live within a second or two. */
    public static final long RELOAD_INTERVAL_MILLIS = 1_000;

    /** One small daemon thread for every port's reloads: reading three small files a second costs nothing. */
    private static final ScheduledExecutorService RELOADER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rota-tls-reload");
        t.setDaemon(true);
        return t;
    });

    private final TlsFiles files;
    private final List<Path> alsoTrusted;
    private final boolean verifyHostname;
    private final String what;
    private volatile Material current;
    /** Hash of the files at the last load attempt that failed: a failure is logged once per content. */
    private byte[] failedDigest;
    private ScheduledFuture<?> reloading;

    /** The contexts built from one reading of the files. */
    private record Material(SslContext server, SslContext client, SslContext optionalClientCert,
                            X509Certificate leaf, byte[] digest, TlsProvider provider) {
    }

    private TlsContexts(TlsFiles files, List<Path> alsoTrusted, boolean verifyHostname, String what) {
        this.files = files;
        this.alsoTrusted = List.copyOf(alsoTrusted);
        this.verifyHostname = verifyHostname;
        this.what = what;
        this.current = load(digest());
    }

    /**
     * Loads the files of one port.
     *
     * @param files          the port's files
     * @param alsoTrusted    more CA files the {@linkplain #client() client context} trusts (none for most ports)
     * @param verifyHostname whether the client context checks the server's certificate against the dialled
     *                       host name (the peer port checks member names itself, so it does not)
     * @param what           the port's name in log lines and errors, e.g. "client port"
     * @return the contexts, not yet reloading
     * @throws IllegalArgumentException naming the file that cannot be used, and why
     */
    public static TlsContexts load(TlsFiles files, List<Path> alsoTrusted, boolean verifyHostname, String what) {
        return new TlsContexts(files, alsoTrusted, verifyHostname, what);
    }

    /** The context for connections this side accepts. */
    public SslContext server() {
        return current.server;
    }

    /**
     * A server context with this port's certificate that asks for a client certificate chaining to the
     * trusted CA but does not require one (ClientAuth.OPTIONAL): for the member's HTTP port, where a
     * Kubernetes probe or a scraper without a certificate must still reach /health and /metrics (design X12).
     */
    public SslContext serverOptionalClientCert() {
        return current.optionalClientCert;
    }

    /** The context for connections this side dials. */
    public SslContext client() {
        return current.client;
    }

    /** The serial number (hex) of the certificate presented now: log lines and tests see a rotation by it. */
    public String serial() {
        return current.leaf.getSerialNumber().toString(16);
    }

    /** The provider in use: {@link TlsFiles#provider()}, or JDK when OpenSSL could not load. */
    public TlsProvider provider() {
        return current.provider;
    }

    /** Starts watching the files (every {@link #RELOAD_INTERVAL_MILLIS}); idempotent. */
    public synchronized TlsContexts startReloading() {
        if (reloading == null) {
            reloading = RELOADER.scheduleWithFixedDelay(this::reloadIfChanged, RELOAD_INTERVAL_MILLIS,
                    RELOAD_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    /** Stops watching the files. */
    @Override
    public synchronized void close() {
        if (reloading != null) {
            reloading.cancel(false);
            reloading = null;
        }
    }

    /** One poll: reload when the files' bytes differ from the loaded ones. Runs on the reload thread. */
    void reloadIfChanged() {
        byte[] digest;
        try {
            digest = digest();
        } catch (IllegalArgumentException e) {
            return;   // a file is missing for a moment (replaced by a rename): the next poll sees it
        }
        if (Arrays.equals(digest, current.digest) || Arrays.equals(digest, failedDigest)) {
            return;
        }
        try {
            String before = serial();
            current = load(digest);
            failedDigest = null;
            log.info("TLS files of the {} reloaded: certificate serial {} (was {}), {}; new connections use it",
                    what, serial(), before, current.leaf.getSubjectX500Principal().getName());
        } catch (IllegalArgumentException e) {
            failedDigest = digest;
            log.warn("TLS files of the {} changed but cannot be used, keeping the loaded ones (serial {}): {}",
                    what, serial(), e.getMessage());
        }
    }

    private byte[] digest() {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (Path p : allFiles()) {
                sha.update(Files.readAllBytes(p));
                sha.update((byte) 0);
            }
            return sha.digest();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    private List<Path> allFiles() {
        List<Path> all = new ArrayList<>(List.of(files.certFile(), files.keyFile()));
        if (files.trustedCaFile() != null) {
            all.add(files.trustedCaFile());
        }
        if (files.policy().crlFile() != null) {
            all.add(files.policy().crlFile());   // a new CRL is live within a second, like a rotated certificate
        }
        all.addAll(alsoTrusted);
        return all;
    }

    private Material load(byte[] digest) {
        List<X509Certificate> chain = certificates(files.certFile(), "certificate");
        PrivateKey key = privateKey(files.keyFile(), chain.get(0));
        List<X509Certificate> trusted = new ArrayList<>();
        if (files.trustedCaFile() != null) {
            trusted.addAll(certificates(files.trustedCaFile(), "CA"));
        }
        List<X509Certificate> clientTrust = new ArrayList<>(trusted);
        for (Path p : alsoTrusted) {
            clientTrust.addAll(certificates(p, "CA"));
        }
        TlsProvider effective = effectiveProvider(files.provider());
        SslProvider provider = effective == TlsProvider.OPENSSL ? SslProvider.OPENSSL : SslProvider.JDK;
        TlsPolicy policy = files.policy();
        try {
            SslContextBuilder server = SslContextBuilder.forServer(key, chain).sslProvider(provider)
                    .protocols(policy.protocols()).ciphers(policy.enabledSuites());
            if (!trusted.isEmpty()) {
                if (policy.checksCertificates()) {
                    server.trustManager(new PolicyTrustManager(trustManager(trusted), policy, trusted, false));
                } else {
                    server.trustManager(trusted);
                }
            }
            server.clientAuth(trusted.isEmpty() ? ClientAuth.NONE : ClientAuth.OPTIONAL);
            SslContext optional = server.build();
            server.clientAuth(files.requireClientCert() ? ClientAuth.REQUIRE : ClientAuth.NONE);
            SslContextBuilder client = SslContextBuilder.forClient().sslProvider(provider).keyManager(key, chain)
                    .endpointIdentificationAlgorithm(verifyHostname ? "HTTPS" : null)
                    .protocols(policy.protocols()).ciphers(policy.enabledSuites());
            if (!clientTrust.isEmpty()) {
                if (policy.checksCertificates() && policy.serversToo()) {
                    client.trustManager(new PolicyTrustManager(trustManager(clientTrust), policy, clientTrust, true));
                } else {
                    client.trustManager(clientTrust);
                }
            }
            return new Material(server.build(), client.build(), optional, chain.get(0), digest, effective);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot build a TLS context from " + files.certFile() + " and "
                    + files.keyFile() + ": " + e.getMessage(), e);
        }
    }

    /** The JDK's PKIX trust manager for {@code cas}. */
    public static javax.net.ssl.X509ExtendedTrustManager trustManager(List<X509Certificate> cas)
            throws GeneralSecurityException, IOException {
        java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
        store.load(null, null);
        int i = 0;
        for (X509Certificate ca : cas) {
            store.setCertificateEntry("ca" + i++, ca);
        }
        javax.net.ssl.TrustManagerFactory factory = javax.net.ssl.TrustManagerFactory.getInstance(
                javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        return (javax.net.ssl.X509ExtendedTrustManager) factory.getTrustManagers()[0];
    }

    private static volatile boolean fallbackLogged;

    /** OPENSSL when asked for and netty-tcnative loads; JDK otherwise, saying why once. */
    static TlsProvider effectiveProvider(TlsProvider wanted) {
        if (wanted != TlsProvider.OPENSSL || OpenSsl.isAvailable()) {
            return wanted;
        }
        if (!fallbackLogged) {
            fallbackLogged = true;
            log.warn("TLS provider openssl is not available here ({}); using the JDK's TLS instead",
                    String.valueOf(OpenSsl.unavailabilityCause()));
        }
        return TlsProvider.JDK;
    }

    /** Every certificate in a PEM file; at least one. */
    static List<X509Certificate> certificates(Path file, String kind) {
        try {
            Collection<? extends Certificate> read = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(file)));
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : read) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(file + " holds no PEM " + kind + " certificate");
            }
            return out;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(file + " is not a PEM " + kind + " certificate file: " + e.getMessage(), e);
        }
    }

    /**
     * The unencrypted PKCS#8 key in {@code file}, checked against {@code leaf}: it must sign what the
     * certificate's public key verifies, so a key and certificate of different pairs are refused here, not
     * at every handshake.
     */
    static PrivateKey privateKey(Path file, X509Certificate leaf) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read key file " + file + ": " + e.getMessage(), e);
        }
        String begin = "-----BEGIN PRIVATE KEY-----";
        int start = pem.indexOf(begin);
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (start < 0 || end < start) {
            throw new IllegalArgumentException(file + " holds no unencrypted PKCS#8 key ('" + begin + "'); convert it"
                    + " with: openssl pkcs8 -topk8 -nocrypt -in " + file + " -out key.pem");
        }
        try {
            byte[] der = Base64.getMimeDecoder().decode(pem.substring(start + begin.length(), end));
            String algorithm = leaf.getPublicKey().getAlgorithm();
            PrivateKey key = KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            String signing = "EC".equals(algorithm) ? "SHA256withECDSA"
                    : "RSA".equals(algorithm) ? "SHA256withRSA" : null;
            if (signing != null) {
                byte[] probe = "rota".getBytes(StandardCharsets.US_ASCII);
                Signature s = Signature.getInstance(signing);
                s.initSign(key);
                s.update(probe);
                byte[] signature = s.sign();
                s.initVerify(leaf.getPublicKey());
                s.update(probe);
                if (!s.verify(signature)) {
                    throw new IllegalArgumentException("the key in " + file + " does not belong to the certificate "
                            + leaf.getSubjectX500Principal().getName() + " (serial "
                            + leaf.getSerialNumber().toString(16) + ")");
                }
            }
            return key;
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("the key in")) {
                throw (IllegalArgumentException) e;
            }
            throw new IllegalArgumentException(file + " holds no usable private key for the certificate's "
                    + leaf.getPublicKey().getAlgorithm() + " public key: " + e.getMessage(), e);
        }
    }

    /**
     * The certificate's subject CN, or null when it has none. A subject with several CNs yields the LAST one in
     * the subject's order (the DER sequence), as Go's {@code pkix.Name} — and so etcd — read it: one rule for
     * the peer member-name check, the client port's CN → user and the etcd port's, which all call this.
     */
    public static String commonName(X509Certificate certificate) {
        Objects.requireNonNull(certificate, "certificate");
        String last = null;
        try {
            // LdapName lists RDNs right to left of the RFC 2253 string, which is the DER order.
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                javax.naming.directory.Attribute cn = rdn.toAttributes().get("CN");
                if (cn != null) {
                    for (int i = 0; i < cn.size(); i++) {
                        last = String.valueOf(cn.get(i));
                    }
                }
            }
        } catch (javax.naming.NamingException e) {
            return null;
        }
        return last;
    }

    /** The certificate's DNS subject alternative names: the only SANs that can carry a member name. */
    public static List<String> dnsNames(X509Certificate certificate) {
        return alternativeNames(certificate, 2);
    }

    /** The certificate's DNS names and IP addresses from its subject alternative names. */
    public static List<String> alternativeNames(X509Certificate certificate) {
        return alternativeNames(certificate, 2, 7);   // dNSName, iPAddress (RFC 5280 §4.2.1.6)
    }

    private static List<String> alternativeNames(X509Certificate certificate, int... types) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> sans = certificate.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    int type = (Integer) san.get(0);
                    if (Arrays.stream(types).anyMatch(t -> t == type)) {
                        names.add(String.valueOf(san.get(1)));
                    }
                }
            }
        } catch (GeneralSecurityException e) {
            return names;
        }
        return names;
    }
}
