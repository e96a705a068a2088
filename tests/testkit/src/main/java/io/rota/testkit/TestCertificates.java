package io.rota.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Throwaway certificate authorities and certificates for TLS tests, made with the {@code openssl} command
 * (Debian's OpenSSL 3, as scripts/cluster.sh uses): EC P-256 keys (fast to make), unencrypted PKCS#8 PEM
 * keys, a random serial per certificate (a rotation test tells two certificates apart by it), valid for two
 * days. No Rota class and no new library: a test that cannot run {@code openssl} asks
 * {@link #unavailable()} and skips loudly.
 *
 * <pre>{@code
 * TestCertificates.Ca ca = TestCertificates.ca(dir, "cluster-ca");
 * TestCertificates.Pair n1 = ca.issue("n1", List.of("n1", "localhost"), List.of("127.0.0.1"));
 * }</pre>
 */
public final class TestCertificates {

    private TestCertificates() {
    }

    /** A certificate and its key, as PEM files. */
    public record Pair(Path cert, Path key) {
        /** The certificate's serial number, lower-case hex without leading zeros (as Java prints it). */
        public String serial() {
            return run(List.of("openssl", "x509", "-in", cert.toString(), "-noout", "-serial"))
                    .trim().replaceFirst("^serial=", "").replaceFirst("^0+(?=.)", "").toLowerCase();
        }
    }

    /** A certificate authority: its certificate ({@link #cert}) is what the other side trusts. */
    public record Ca(Path cert, Path key, Path dir) {

        /**
         * Issues a certificate for {@code commonName}, usable by servers and clients (both extended key
         * usages: a member serves its ports and dials its peers with the same certificate).
         *
         * @param commonName the subject CN (a member name, or a client's user name)
         * @param dnsNames   DNS subject alternative names (may be empty)
         * @param ipAddresses IP subject alternative names (may be empty)
         * @return the files {@code <commonName>.pem} and {@code <commonName>.key} beside the CA's
         */
        public Pair issue(String commonName, List<String> dnsNames, List<String> ipAddresses) {
            return issue(commonName, commonName, dnsNames, ipAddresses);
        }

        /** As {@link #issue(String, List, List)}, written as {@code <fileName>.pem/.key}. */
        public Pair issue(String fileName, String commonName, List<String> dnsNames, List<String> ipAddresses) {
            Path cert = dir.resolve(fileName + ".pem");
            Path key = dir.resolve(fileName + ".key");
            Path csr = dir.resolve(fileName + ".csr");
            Path ext = dir.resolve(fileName + ".ext");
            List<String> sans = new ArrayList<>();
            dnsNames.forEach(n -> sans.add("DNS:" + n));
            ipAddresses.forEach(a -> sans.add("IP:" + a));
            StringBuilder extensions = new StringBuilder("basicConstraints=CA:FALSE\n"
                    + "keyUsage=critical,digitalSignature,keyEncipherment\n"
                    + "extendedKeyUsage=serverAuth,clientAuth\n");
            if (!sans.isEmpty()) {
                extensions.append("subjectAltName=").append(String.join(",", sans)).append('\n');
            }
            try {
                Files.writeString(ext, extensions, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            run(List.of("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key.toString(), "-out", csr.toString(), "-subj", "/CN=" + commonName));
            run(List.of("openssl", "x509", "-req", "-in", csr.toString(), "-CA", this.cert.toString(),
                    "-CAkey", this.key.toString(), "-set_serial", randomSerial(), "-days", "2",
                    "-extfile", ext.toString(), "-out", cert.toString()));
            return new Pair(cert, key);
        }
    }

    /**
     * Why certificates cannot be made here ({@code openssl} cannot run), or null when they can. Tests
     * skip with this message: {@code assumeTrue(TestCertificates.unavailable() == null, ...)}.
     */
    public static String unavailable() {
        try {
            Process p = new ProcessBuilder("openssl", "version").redirectErrorStream(true).start();
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return null;
            }
            p.destroyForcibly();
            return "'openssl version' failed: install OpenSSL (Debian: apt-get install openssl) to run the TLS tests";
        } catch (IOException e) {
            return "no 'openssl' command (" + e.getMessage() + "): install OpenSSL (Debian: apt-get install openssl)"
                    + " to run the TLS tests";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** A new self-signed CA named {@code name} in {@code dir}: {@code <name>.pem} and {@code <name>.key}. */
    public static Ca ca(Path dir, String name) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path cert = dir.resolve(name + ".pem");
        Path key = dir.resolve(name + ".key");
        run(List.of("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=" + name,
                "-set_serial", randomSerial(),
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"));
        return new Ca(cert, key, dir);
    }

    private static String randomSerial() {
        return "0x" + Long.toHexString(ThreadLocalRandom.current().nextLong(1L << 40, Long.MAX_VALUE));
    }

    private static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within 30 s");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (exit " + p.exitValue() + "): "
                        + text);
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
