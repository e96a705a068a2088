package io.rota.server.cluster;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who counts as a fresh process in the peer handshake (design M12). No transport is needed for these rules. */
class PeerDirectoryTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("a newcomer that is about to publish itself is no longer fresh, though its log is still empty")
    void aNewcomerAboutToPublishIsNotFresh() {
        Path data = dir.resolve("n7");
        PeerDirectory newcomer = new PeerDirectory(7, MemberIdentity.open(data, "rota", 7, null), data, null);
        newcomer.setEmptyLog(() -> true); // catching up by snapshot: nothing stored yet
        assertTrue(newcomer.fresh(), "before it publishes, an empty directory is fresh");

        newcomer.recordJoined(); // what MemberPublisher runs before proposing the publication
        assertFalse(newcomer.fresh(),
                "its publication may commit on the others before its own log holds anything; a peer that redials"
                        + " it then must not refuse it as a fresh process under a joined id (chaos seed 7)");
        assertTrue(MemberIdentity.read(data).orElseThrow().joined(), "recorded on disk, so a restart keeps it");

        Path peerData = dir.resolve("n5");
        PeerDirectory peer = new PeerDirectory(5, MemberIdentity.open(peerData, "rota", 5, null), peerData, null);
        assertNull(peer.refuse(7, newcomer.fresh()), "the handshake of the joining process is accepted");
    }

    @Test
    @DisplayName("a process on an empty directory that never published stays fresh")
    void anEmptyDirectoryThatNeverPublishedStaysFresh() {
        Path data = dir.resolve("n4");
        PeerDirectory d = new PeerDirectory(4, MemberIdentity.open(data, "rota", 4, null), data, null);
        d.setEmptyLog(() -> true);
        assertTrue(d.fresh());
        assertFalse(MemberIdentity.read(data).map(MemberIdentity::joined).orElse(false));
    }
}
