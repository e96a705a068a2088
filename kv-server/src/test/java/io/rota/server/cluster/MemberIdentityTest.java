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
        MemberIdentity fresh = MemberIdentity.open(dir.resolve("n1"), "rota", 1);
        assertFalse(fresh.joined());
        new MemberIdentity("rota", 1, true).write(dir.resolve("n1"));
        assertTrue(MemberIdentity.open(dir.resolve("n1"), "rota", 1).joined());
    }

    @Test
    void aDirectoryWithALogButNoIdentityIsAnOlderMembersAndCountsAsJoined() throws Exception {
        Files.createDirectories(dir.resolve("n2"));
        Files.writeString(dir.resolve("n2").resolve("CURRENT"), "MANIFEST-000001\n");
        assertTrue(MemberIdentity.open(dir.resolve("n2"), "rota", 2).joined());
    }

    @Test
    void anotherMembersOrClustersDirectoryIsRefused() {
        MemberIdentity.open(dir.resolve("n3"), "rota", 3);
        MemberRefusedException member = assertThrows(MemberRefusedException.class,
                () -> MemberIdentity.open(dir.resolve("n3"), "rota", 4));
        assertTrue(member.getMessage().contains("belongs to member 3"), member.getMessage());
        MemberRefusedException cluster = assertThrows(MemberRefusedException.class,
                () -> MemberIdentity.open(dir.resolve("n3"), "other", 3));
        assertTrue(cluster.getMessage().contains("of cluster 'rota'"), cluster.getMessage());
        assertEquals(3, MemberIdentity.read(dir.resolve("n3")).orElseThrow().memberId());
    }
}
