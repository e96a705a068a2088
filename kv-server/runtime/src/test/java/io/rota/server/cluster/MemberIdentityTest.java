package io.rota.server.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The data directory's identity (issue 13, docs/design.md M12). */
class MemberIdentityTest {

    @TempDir
    Path dir;

    @Test
    void anEmptyDirectoryIsFreshAndBecomesJoined() {
        MemberIdentity fresh = MemberIdentity.open(dir.resolve("n1"), "rota", 1, null);
        assertFalse(fresh.joined());
        new MemberIdentity("rota", 1, true).write(dir.resolve("n1"));
        assertTrue(MemberIdentity.open(dir.resolve("n1"), "rota", 1, null).joined());
    }

    @Test
    void aDirectoryWithALogButNoIdentityIsAnOlderMembersAndCountsAsJoined() throws Exception {
        Files.createDirectories(dir.resolve("n2"));
        Files.writeString(dir.resolve("n2").resolve("CURRENT"), "MANIFEST-000001\n");
        assertTrue(MemberIdentity.open(dir.resolve("n2"), "rota", 2, null).joined());
    }

    @Test
    void anotherMembersOrClustersDirectoryIsRefused() {
        MemberIdentity.open(dir.resolve("n3"), "rota", 3, null);
        MemberRefusedException member = assertThrows(MemberRefusedException.class,
                () -> MemberIdentity.open(dir.resolve("n3"), "rota", 4, null));
        assertTrue(member.getMessage().contains("belongs to member 3"), member.getMessage());
        MemberRefusedException cluster = assertThrows(MemberRefusedException.class,
                () -> MemberIdentity.open(dir.resolve("n3"), "other", 3, null));
        assertTrue(cluster.getMessage().contains("of cluster 'rota'"), cluster.getMessage());
        assertEquals(3, MemberIdentity.read(dir.resolve("n3")).orElseThrow().memberId());
    }

    @Test
    void theBootstrapClusterIsRecordedAndOnlyOtherNamesOrIdsDisagree() {
        Path n1 = dir.resolve("n1");
        String bootstrap = "n1=1@127.0.0.1:7101,n2=2@127.0.0.1:7102,n3=3@127.0.0.1:7103";
        assertEquals(bootstrap, MemberIdentity.open(n1, "rota", 1, bootstrap).initialCluster());
        // Same flags; a peer address moved by `member update`; a joining start (nothing bootstrapped): all fine.
        MemberIdentity.open(n1, "rota", 1, bootstrap);
        MemberIdentity.open(n1, "rota", 1, "n1=1@127.0.0.1:7201,n2=2@127.0.0.1:7102,n3=3@127.0.0.1:7103");
        MemberIdentity.open(n1, "rota", 1, null);
        MemberIdentity.open(n1, "rota", 1, bootstrap + ",n4=4@127.0.0.1:7104");   // a member added since, appended
        assertEquals(bootstrap, MemberIdentity.read(n1).orElseThrow().initialCluster(), "the first record stays");
        // A bootstrap member left out or replaced, another id for a name: the data dir wins.
        for (String other : new String[]{"n1=1@127.0.0.1:7101,n2=2@127.0.0.1:7102,n4=4@127.0.0.1:7104",
                "n1=1@127.0.0.1:7101,n2=5@127.0.0.1:7102,n3=3@127.0.0.1:7103", "n1=1@127.0.0.1:7101"}) {
            MemberRefusedException e = assertThrows(MemberRefusedException.class,
                    () -> MemberIdentity.open(n1, "rota", 1, other));
            assertTrue(e.getMessage().contains("was bootstrapped as member 1 of {" + bootstrap + "}"), e.getMessage());
        }
        // "joined" keeps the record.
        MemberIdentity.read(n1).orElseThrow().asJoined().write(n1);
        assertEquals(bootstrap, MemberIdentity.read(n1).orElseThrow().initialCluster());
        // A file from before issue 32 records what this start bootstraps with, unchecked.
        Path old = dir.resolve("old");
        new MemberIdentity("rota", 2, true).write(old);
        assertEquals(bootstrap, MemberIdentity.open(old, "rota", 2, bootstrap).initialCluster());
    }
}
