package io.rota.server;

import io.rota.server.backup.RestoreTest;
import io.rota.server.cluster.MemberIdentity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rota snapshot restore}'s command line: exit 0 and the next step, 1 for a bad file, 2 for bad flags. */
class SnapshotRestoreCommandTest {

    private static final String CLUSTER = "n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103";

    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RotaServer.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void restoresAndPrintsHowToStartTheMemberOfTheNewCluster() throws Exception {
        Path file = Files.write(dir.resolve("b.db"), RestoreTest.file(RestoreTest.image()));
        Run r = run("snapshot", "restore", file.toString(), "--name", "n2", "--initial-cluster", CLUSTER,
                "--data-dir", dir.resolve("n2").toString());
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("for member n2 (id 2) of a new cluster"), r.out());
        assertTrue(r.out().matches("(?s).*rota server --name n2 .* --cluster-id restored-[0-9a-f]{8} --listen-peer"
                + " 127.0.0.1:7102.*"), r.out());
        Run again = run("snapshot", "restore", file.toString(), "--name", "n2", "--initial-cluster", CLUSTER,
                "--data-dir", dir.resolve("n2").toString());
        assertEquals(1, again.code(), again.toString());
        assertTrue(again.err().contains("is not empty"), again.err());
        // Issue 32: another restore of the same file is another cluster, with another id (it was the file's hash);
        // the restored dir records its --initial-cluster like a bootstrap member's.
        String first = MemberIdentity.read(dir.resolve("n2")).orElseThrow().clusterId();
        assertTrue(r.out().contains("from the same file with --cluster-id " + first), r.out());
        assertEquals(0, run("snapshot", "restore", file.toString(), "--name", "n2", "--initial-cluster", CLUSTER,
                "--data-dir", dir.resolve("n2-again").toString()).code());
        MemberIdentity second = MemberIdentity.read(dir.resolve("n2-again")).orElseThrow();
        assertTrue(second.clusterId().matches("restored-[0-9a-f]{8}") && !second.clusterId().equals(first),
                first + " then " + second.clusterId());
        assertTrue(second.initialCluster().startsWith("n1=1@127.0.0.1:7101,n2=2@"), second.initialCluster());
    }

    @Test
    void badFlagsExit2AndABadFileExits1WithoutWritingAnything() throws Exception {
        Path file = Files.write(dir.resolve("b.db"), RestoreTest.file(RestoreTest.image()));
        Path data = dir.resolve("d");
        assertEquals(2, run("snapshot", "restore", file.toString(), "--name", "n9", "--initial-cluster", CLUSTER,
                "--data-dir", data.toString()).code());
        assertEquals(2, run("snapshot", "restore", file.toString(), "--name", "n1", "--initial-cluster", "n1",
                "--data-dir", data.toString()).code());
        Run sameId = run("snapshot", "restore", file.toString(), "--name", "n1", "--initial-cluster", CLUSTER,
                "--data-dir", data.toString(), "--cluster-id", "prod");
        assertEquals(2, sameId.code(), sameId.toString());
        assertTrue(sameId.err().contains("new cluster"), sameId.err());
        Run missing = run("snapshot", "restore", dir.resolve("none.db").toString(), "--name", "n1",
                "--initial-cluster", CLUSTER, "--data-dir", data.toString());
        assertEquals(1, missing.code(), missing.toString());
        assertTrue(missing.err().contains("cannot read"), missing.err());
        assertFalse(Files.exists(data));
    }
}
