package io.rota.raft.transport;

import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Loading PEM files, refusing a key of another certificate, and reloading on change (certificate rotation). */
class TlsContextsTest {

    @TempDir
    Path dir;

    private TestCertificates.Ca ca;

    @BeforeEach
    void certificates() {
        String missing = TestCertificates.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS tests need openssl to make certificates: " + missing);
        ca = TestCertificates.ca(dir, "ca");
    }

    @Test
    void rotatedFilesAreLoadedAndAHalfWrittenRotationKeepsTheOldCertificate() throws Exception {
        TestCertificates.Pair first = ca.issue("first", "n1", List.of("n1"), List.of());
        TestCertificates.Pair second = ca.issue("second", "n1", List.of("n1"), List.of());
        Path cert = dir.resolve("live.pem");
        Path key = dir.resolve("live.key");
        copy(first.cert(), cert);
        copy(first.key(), key);
        try (TlsContexts tls = TlsContexts.load(new TlsFiles(cert, key, ca.cert(), true, TlsProvider.JDK), List.of(),
                false, "test port")) {
            assertEquals(first.serial(), tls.serial());
            tls.reloadIfChanged();
            assertEquals(first.serial(), tls.serial(), "unchanged files: nothing reloaded");

            copy(second.cert(), cert);   // the certificate swapped, its key not yet
            tls.reloadIfChanged();
            assertEquals(first.serial(), tls.serial(), "a certificate beside another pair's key is not used");

            copy(second.key(), key);
            tls.reloadIfChanged();
            assertEquals(second.serial(), tls.serial(), "the rotated pair is live");
            assertNotEquals(first.serial(), second.serial());
        }
    }

    @Test
    void aKeyOfAnotherCertificateIsRefusedNamingTheFile() {
        TestCertificates.Pair a = ca.issue("a", "n1", List.of(), List.of());
        TestCertificates.Pair b = ca.issue("b", "n2", List.of(), List.of());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TlsContexts.load(
                new TlsFiles(a.cert(), b.key(), null, false, TlsProvider.JDK), List.of(), false, "test port"));
        assertTrue(e.getMessage().contains(b.key().toString()) && e.getMessage().contains("does not belong"),
                e.getMessage());
    }

    @Test
    void theCommonNameAndAlternativeNamesAreRead() {
        TestCertificates.Pair p = ca.issue("names", "n7", List.of("n7", "localhost"), List.of("127.0.0.1"));
        var leaf = TlsContexts.certificates(p.cert(), "certificate").get(0);
        assertEquals("n7", TlsContexts.commonName(leaf));
        assertEquals(List.of("n7", "localhost", "127.0.0.1"), TlsContexts.alternativeNames(leaf));
    }

    private static void copy(Path from, Path to) throws Exception {
        Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
    }
}
