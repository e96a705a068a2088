package io.rota.client.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where the endpoints come from (and that rotactl can say so), and the value formats of the command line (durations, lease ids). */
class EndpointsAndValuesTest {

    @TempDir
    Path dir;

    private static EndpointSource resolve(String option, Map<String, String> env, Path workingDir) {
        return EndpointSource.resolve(option, env, workingDir);
    }

    @Test
    void optionBeatsEnvironmentBeatsTheStateFileBeatsTheDefault() throws IOException {
        Path noState = dir.resolve("empty");
        Map<String, String> env = Map.of("ROTA_ENDPOINTS", "10.0.0.1:7001, 10.0.0.2:7001", "ROTA_BASE_PORT", "8000");
        assertEquals(new EndpointSource(List.of("h:1", "h:2"), "--endpoints"), resolve("h:1,h:2", env, noState));
        assertEquals(new EndpointSource(List.of("10.0.0.1:7001", "10.0.0.2:7001"), "ROTA_ENDPOINTS"),
                resolve(null, env, noState));
        assertEquals(new EndpointSource(List.of("127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003"),
                "ROTA_BASE_PORT=8000"), resolve(null, Map.of("ROTA_BASE_PORT", "8000"), noState));
        EndpointSource defaults = new EndpointSource(List.of("127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"),
                "the default");
        assertEquals(defaults, resolve(null, Map.of(), noState));
        assertEquals(defaults, resolve(null, Map.of("ROTA_ENDPOINTS", " "), noState));

        // scripts/cluster.sh's state file: in ROTA_CLUSTER_DIR, else ./data of the working directory.
        Path clusterDir = Files.createDirectories(dir.resolve("cluster"));
        Files.writeString(clusterDir.resolve("cluster.env"), "# comment\nROTA_BASE_PORT=9400\nROTA_MEMBERS=3\n"
                + "ROTA_ENDPOINTS=127.0.0.1:9401,127.0.0.1:9402,127.0.0.1:9403\n");
        EndpointSource fromState = resolve(null, Map.of("ROTA_CLUSTER_DIR", clusterDir.toString()), noState);
        assertEquals(List.of("127.0.0.1:9401", "127.0.0.1:9402", "127.0.0.1:9403"), fromState.endpoints());
        assertEquals(clusterDir.resolve("cluster.env") + " (written by scripts/cluster.sh)", fromState.source());
        Path workingDir = dir.resolve("repo");
        Files.createDirectories(workingDir.resolve("data"));
        Files.copy(clusterDir.resolve("cluster.env"), workingDir.resolve("data").resolve("cluster.env"));
        assertEquals(fromState.endpoints(), resolve(null, Map.of(), workingDir).endpoints());
        assertEquals("127.0.0.1:8001,127.0.0.1:8002,127.0.0.1:8003 (from ROTA_BASE_PORT=8000)",
                resolve(null, Map.of("ROTA_BASE_PORT", "8000"), workingDir).describe(), "the variable beats the file");
    }

    @Test
    void aTlsClustersStateFileGivesItsCertificatesOnlyWithItsEndpoints() throws Exception {
        Path clusterDir = Files.createDirectories(dir.resolve("tls-cluster"));
        Files.writeString(clusterDir.resolve("cluster.env"), "ROTA_BASE_PORT=9400\nROTA_MEMBERS=3\n"
                + "ROTA_ENDPOINTS=127.0.0.1:9401\nROTA_TLS=1\nROTA_CACERT=/d/tls/ca.pem\nROTA_CERT=/d/tls/client.pem\n"
                + "ROTA_KEY=/d/tls/client.key\n");
        Map<String, String> env = Map.of("ROTA_CLUSTER_DIR", clusterDir.toString());
        assertEquals(Map.of("ROTA_CACERT", "/d/tls/ca.pem", "ROTA_CERT", "/d/tls/client.pem",
                "ROTA_KEY", "/d/tls/client.key"), resolve(null, env, dir).tls());
        assertEquals(Map.of(), resolve("127.0.0.1:9401", env, dir).tls(),
                "endpoints from a flag never pick up the state file's certificates");
    }

    @Test
    void aStateFileOthersMayWriteIsRefused() throws Exception {
        // Issue 33: the file decides where a password goes; one that others may have written is not trusted.
        Path workingDir = Files.createDirectories(dir.resolve("shared").resolve("data"));
        Path file = Files.writeString(workingDir.resolve("cluster.env"), "ROTA_ENDPOINTS=10.6.6.6:7001\n");
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> resolve(null, Map.of(), workingDir.getParent()));
        assertTrue(refused.getMessage().startsWith("refusing " + file + ": it is writable by rw-rw-rw-")
                && refused.getMessage().contains("give --endpoints"), refused.getMessage());
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(List.of("10.6.6.6:7001"), resolve(null, Map.of(), workingDir.getParent()).endpoints(),
                "cluster.sh's own 0644 file, ours: used");
    }

    @Test
    void badEndpointsSayWhatIsWrongAndWhere() {
        assertMessage(() -> Endpoints.parse("127.0.0.1", "--endpoints"), "--endpoints '127.0.0.1': it has no port");
        assertMessage(() -> Endpoints.parse("h:70000", "ROTA_ENDPOINTS"), "ROTA_ENDPOINTS 'h:70000': port 70000 is out of range 1–65535");
        assertMessage(() -> Endpoints.parse("h:x", "--endpoints"), "--endpoints 'h:x': the port 'x' is not a number");
        assertMessage(() -> Endpoints.parse("http://h:1", "--endpoints"), "--endpoints: 'http://h:1' is a URL");
        assertMessage(() -> Endpoints.parse(" , ", "--endpoints"), "--endpoints is empty");
        assertMessage(() -> resolve(null, Map.of("ROTA_BASE_PORT", "65534"), dir), "ROTA_BASE_PORT must be a port");
        assertMessage(() -> resolve(null, Map.of("ROTA_BASE_PORT", "abc"), dir), "ROTA_BASE_PORT must be a port");
        assertEquals(List.of("[::1]:7001", "h:2"), Endpoints.parse("[::1]:7001,,h:2", "--endpoints"));
    }

    @Test
    void durationsAsEtcdctlWritesThem() {
        assertEquals(Duration.ofSeconds(5), Conversions.duration("5s"));
        assertEquals(Duration.ofMillis(500), Conversions.duration("500ms"));
        assertEquals(Duration.ofMillis(1500), Conversions.duration("1.5s"));
        assertEquals(Duration.ofMinutes(2), Conversions.duration("2m"));
        assertEquals(Duration.ofHours(1), Conversions.duration("1h"));
        assertMessage(() -> Conversions.duration("5"), "invalid duration '5': use e.g. 5s, 500ms or 1m");
        assertMessage(() -> Conversions.duration("0s"), "invalid duration '0s': must be at least 1ms");
        assertEquals("5s", Conversions.format(Duration.ofSeconds(5)));
        assertEquals("500ms", Conversions.format(Duration.ofMillis(500)));
        assertEquals("2.5s", Conversions.format(Duration.ofMillis(2500)));
    }

    @Test
    void leaseIdsAreHexAsPrinted() {
        assertEquals(0x694d5a7b1f2d0c04L, Conversions.leaseId("694d5a7b1f2d0c04"));
        assertEquals(0x15, Conversions.leaseId("0000000000000015"));
        assertEquals(0x15, Conversions.leaseId("0x15"));
        assertEquals(0x15, Conversions.leaseId("15"));
        assertEquals("0000000000000015", Conversions.leaseHex(0x15));
        for (String bad : List.of("", "zz", "0", "-1", "12345678901234567", "ffffffffffffffff")) {
            assertMessage(() -> Conversions.leaseId(bad), "invalid lease ID '" + bad + "': expected the hexadecimal ID");
        }
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String start) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }
}
