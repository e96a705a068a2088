package io.rota.server.etcd;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.rota.raft.transport.TlsFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * TLS for the etcd port from the client port's PEM files. gRPC runs on its own shaded Netty (design.md Y1),
 * so the native port's unshaded contexts ({@code TlsContexts}) cannot be handed to it; this builds a shaded
 * context whose key and trust managers delegate to ones loaded from the files, and swaps those when the files
 * change (polled every second, as the native port does): certificate rotation reaches the etcd port without a
 * restart, and each new handshake uses the current certificate. A rotation whose key does not fit its
 * certificate is logged and ignored until the files agree. Always the JDK provider: the etcd door is not the
 * measured hot path, and the JDK provider needs nothing beside the shaded jar.
 */
final class EtcdTls {

    private static final Logger log = LoggerFactory.getLogger(EtcdTls.class);
    static final long RELOAD_INTERVAL_MILLIS = 1_000;

    private final TlsFiles files;
    private volatile X509ExtendedKeyManager keys;
    private volatile X509ExtendedTrustManager trust;
    private byte[] digest;
    private byte[] failedDigest;

    private EtcdTls(TlsFiles files) {
        this.files = files;
        this.digest = digest(files);
        load();
    }

    /**
     * The server context for {@code files}, reloaded on {@code timer} while it runs.
     *
     * @throws IllegalArgumentException naming the file that cannot be used
     */
    static SslContext serverContext(TlsFiles files, ScheduledExecutorService timer) {
        EtcdTls tls = new EtcdTls(files);
        try {
            SslContextBuilder b = SslContextBuilder.forServer(tls.new KeyManager()).sslProvider(SslProvider.JDK);
            if (files.trustedCaFile() != null) {
                b.trustManager(tls.new TrustManager());
            }
            b.clientAuth(files.requireClientCert() ? ClientAuth.REQUIRE : ClientAuth.NONE);
            SslContextBuilder configured = GrpcSslContexts.configure(b, SslProvider.JDK)
                    .protocols(files.policy().protocols());
            if (files.policy().enabledSuites() != null) {   // after gRPC's own choice, which it replaces
                configured.ciphers(files.policy().enabledSuites());
            }
            SslContext context = configured.build();
            timer.scheduleWithFixedDelay(tls::reloadIfChanged, RELOAD_INTERVAL_MILLIS, RELOAD_INTERVAL_MILLIS,
                    TimeUnit.MILLISECONDS);
            return context;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot build the etcd port's TLS context from " + files.certFile()
                    + " and " + files.keyFile() + ": " + e.getMessage(), e);
        }
    }

    private void reloadIfChanged() {
        byte[] now;
        try {
            now = digest(files);
        } catch (IllegalArgumentException e) {
            return;   // a file is missing for a moment (replaced by a rename): the next poll sees it
        }
        if (Arrays.equals(now, digest) || Arrays.equals(now, failedDigest)) {
            return;
        }
        try {
            load();
            digest = now;
            failedDigest = null;
            log.info("TLS files of the etcd port reloaded ({}); new connections use them", files.certFile());
        } catch (IllegalArgumentException e) {
            failedDigest = now;
            log.warn("TLS files of the etcd port changed but cannot be used, keeping the loaded ones: {}", e.getMessage());
        }
    }

    /** Reads the files into new key and trust managers; the key must fit the certificate. */
    private void load() {
        List<X509Certificate> chain = certificates(files.certFile());
        PrivateKey key = privateKey(files.keyFile());
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] none = new char[0];
            ks.setKeyEntry("etcd", key, none, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, none);
            X509ExtendedKeyManager k = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
            // The key must sign what the certificate's public key verifies: a half-written rotation fails here.
            java.security.Signature sign = java.security.Signature.getInstance(
                    key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm());
            sign.initSign(key);
            sign.update(new byte[] {1});
            byte[] signature = sign.sign();
            sign.initVerify(chain.get(0).getPublicKey());
            sign.update(new byte[] {1});
            if (!sign.verify(signature)) {
                throw new IllegalArgumentException(files.keyFile() + " is not the key of " + files.certFile());
            }
            X509ExtendedTrustManager t = null;
            if (files.trustedCaFile() != null) {
                KeyStore ts = KeyStore.getInstance("PKCS12");
                ts.load(null, null);
                int i = 0;
                for (X509Certificate ca : certificates(files.trustedCaFile())) {
                    ts.setCertificateEntry("ca" + i++, ca);
                }
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(ts);
                t = (X509ExtendedTrustManager) tmf.getTrustManagers()[0];
                if (files.policy().checksCertificates()) {   // CRL, allowed CN and host: as the client port
                    t = new io.rota.raft.transport.PolicyTrustManager(t, files.policy(),
                            certificates(files.trustedCaFile()), false);
                }
            }
            keys = k;
            trust = t;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot use " + files.certFile() + " with " + files.keyFile() + ": " + e, e);
        }
    }

    private static byte[] digest(TlsFiles files) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            List<Path> all = new java.util.ArrayList<>(List.of(files.certFile(), files.keyFile()));
            if (files.trustedCaFile() != null) {
                all.add(files.trustedCaFile());
            }
            if (files.policy().crlFile() != null) {
                all.add(files.policy().crlFile());
            }
            for (Path p : all) {
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

    private static List<X509Certificate> certificates(Path file) {
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(
                    new ByteArrayInputStream(Files.readAllBytes(file)))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(file + " holds no PEM certificate");
            }
            return out;
        } catch (IOException | CertificateException e) {
            throw new IllegalArgumentException("cannot read the certificates in " + file + ": " + e.getMessage(), e);
        }
    }

    /** An unencrypted PKCS#8 PEM key ({@code BEGIN PRIVATE KEY}), RSA or EC, as the native port reads. */
    private static PrivateKey privateKey(Path file) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the key " + file + ": " + e.getMessage(), e);
        }
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException(file + " holds no unencrypted PKCS#8 key (BEGIN PRIVATE KEY); convert"
                    + " it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException(file + " holds a key that is neither RSA, EC nor Ed25519");
    }

    /** The current key manager, whichever it is at each handshake. */
    private final class KeyManager extends X509ExtendedKeyManager {
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return keys.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return keys.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return keys.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return keys.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return keys.chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return keys.chooseEngineClientAlias(keyType, issuers, engine);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return keys.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return keys.getPrivateKey(alias);
        }
    }

    /** The current trust manager (the CA client certificates must chain to). */
    private final class TrustManager extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            trust.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            trust.checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            trust.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            trust.checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            trust.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            trust.checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return trust.getAcceptedIssuers();
        }
    }
}
