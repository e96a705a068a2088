package io.rota.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SDK's TLS settings: what does not fit together is refused when built, naming what is wrong. */
class TlsOptionsTest {

    @TempDir
    Path dir;

    @Test
    void settingsThatDoNotFitTogetherAreRefused() throws Exception {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        assertMessage("give trustedCaFile or trustStore, not both",
                () -> TlsOptions.builder().trustedCaFile(pem).trustStore(store).build());
        assertMessage("a client certificate needs its key",
                () -> TlsOptions.builder().clientCertificate(pem, null).build());
        assertMessage("does not exist", () -> TlsOptions.builder().trustedCaFile(dir.resolve("missing.pem")).build());
        TlsOptions options = TlsOptions.builder().trustedCaFile(pem).build();
        assertTrue(options.verifyHostname(), "host names are checked by default");
        assertEquals(options, options.toBuilder().build());
    }

    @Test
    void aCaFileThatIsNoCertificateFailsTheBuildNotTheFirstCall() throws Exception {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RotaClient.builder()
                .endpoints("127.0.0.1:1").tls(TlsOptions.builder().trustedCaFile(pem).build()).build());
        assertTrue(e.getMessage().startsWith("cannot use the TLS settings (CA " + pem), e.getMessage());
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable build) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
