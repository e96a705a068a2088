package io.rota.server;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.rota.client.TlsOptions;
import io.rota.testkit.TestCertificates;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * The certificates of a TLS test cluster of three members (made with {@link TestCertificates}): a cluster CA,
 * member {@code n<i>}'s certificate (CN and DNS SAN {@code n<i>}, SANs localhost and 127.0.0.1) used on both
 * ports, and a client certificate with CN {@value #CLIENT_CN}. Each member's client port reads its own copy of
 * the files ({@link #clientCertFile}), so a test can rotate one member's certificate.
 */
final class TlsCluster {

    static final String CLIENT_CN = "app-a";

    final TestCertificates.Ca ca;
    final TestCertificates.Pair client;
    private final Path dir;

    TlsCluster(Path dir) {
        this.dir = dir;
        this.ca = TestCertificates.ca(dir, "cluster-ca");
        this.client = ca.issue("client", CLIENT_CN, List.of(), List.of());
        for (int i = 0; i < 3; i++) {
            TestCertificates.Pair member = member(i);
            copy(member.cert(), clientCertFile(i));
            copy(member.key(), clientKeyFile(i));
        }
    }

    /** Why these tests cannot run here, or null. */
    static String unavailable() {
        return TestCertificates.unavailable();
    }

    private TestCertificates.Pair member(int i) {
        String name = io.rota.testkit.ProcessCluster.name(i);
        Path cert = dir.resolve(name + ".pem");
        return Files.exists(cert) ? new TestCertificates.Pair(cert, dir.resolve(name + ".key"))
                : ca.issue(name, List.of(name, "localhost"), List.of("127.0.0.1"));
    }

    /** The file member i's client port serves (a copy: rotating it touches no other member). */
    Path clientCertFile(int i) {
        return dir.resolve("n" + (i + 1) + "-client-port.pem");
    }

    Path clientKeyFile(int i) {
        return dir.resolve("n" + (i + 1) + "-client-port.key");
    }

    /** Member i's TLS flags: client port with client certificates required, mutual TLS between members. */
    List<String> memberFlags(int i) {
        TestCertificates.Pair member = member(i);
        return List.of("--cert-file", clientCertFile(i).toString(), "--key-file", clientKeyFile(i).toString(),
                "--trusted-ca-file", ca.cert().toString(), "--client-cert-auth",
                "--peer-cert-file", member.cert().toString(), "--peer-key-file", member.key().toString(),
                "--peer-trusted-ca-file", ca.cert().toString());
    }

    /** The SDK's settings for the client certificate. */
    TlsOptions clientOptions() {
        return TlsOptions.builder().trustedCaFile(ca.cert()).clientCertificate(client.cert(), client.key()).build();
    }

    /** Plain JDK sockets speaking TLS with the client certificate (raw frames, certificate checks). */
    SSLSocketFactory socketFactory() {
        return jdkContext(true).getSocketFactory();
    }

    /**
     * Plain JDK sockets speaking TLS with member i's own certificate, as its peer connections do (a peer
     * port with mutual TLS takes nothing else): for fuzzing what lies behind the TLS layer of a peer port.
     */
    SSLSocketFactory memberSocketFactory(int i) {
        TestCertificates.Pair member = member(i);
        try {
            return ((JdkSslContext) SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .trustManager(ca.cert().toFile()).keyManager(member.cert().toFile(), member.key().toFile())
                    .build()).context().getSocketFactory();
        } catch (SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The JDK's TLS trusting the cluster CA, with the client certificate or without any. */
    private javax.net.ssl.SSLContext jdkContext(boolean withClientCert) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).trustManager(ca.cert().toFile());
            if (withClientCert) {
                b.keyManager(client.cert().toFile(), client.key().toFile());
            }
            return ((JdkSslContext) b.build()).context();
        } catch (SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * GET {@code https://127.0.0.1:port/path} trusting the cluster CA, presenting the client certificate or
     * none, as a probe or a scraper would: the status, or 0 when the connection failed.
     */
    int httpsGetStatus(int port, String path, boolean withClientCert) {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().sslContext(jdkContext(withClientCert))
                .connectTimeout(java.time.Duration.ofSeconds(5)).build();
        try {
            return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("https://127.0.0.1:" + port + path))
                    .timeout(java.time.Duration.ofSeconds(10)).build(),
                    java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The serial (hex) of the certificate a new TLS connection to {@code port} is served. */
    String servedSerial(int port) throws IOException {
        try (SSLSocket socket = (SSLSocket) socketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber().toString(16);
        }
    }

    static void copy(Path from, Path to) {
        try {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
