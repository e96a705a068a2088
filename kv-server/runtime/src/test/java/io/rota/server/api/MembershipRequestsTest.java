package io.rota.server.api;

import io.rota.proto.RegisteredMember;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What membership answers say of members that have not published yet: the answering member's own
 * --initial-cluster fills a missing name or peer address, and never overrides what the registry or a
 * publication says (a `member update` moved the member since). Found by MembershipProcessTest: `member add`
 * right after a cluster started answered {@code m3=3@}, and the new member refused that --initial-cluster.
 */
class MembershipRequestsTest {

    private static RegisteredMember member(long id, String name, String peer) {
        return RegisteredMember.newBuilder().setId(id).setName(name).setPeerAddress(peer).build();
    }

    @Test
    void aMemberThatHasNotPublishedIsDescribedByTheInitialCluster() {
        Map<Long, RegisteredMember> known = Map.of(1L, member(1, "n1", "127.0.0.1:7101"),
                4L, member(4, "n4", "127.0.0.1:7104"));
        Map<Long, RegisteredMember> configured = Map.of(1L, member(1, "n1", "127.0.0.1:7101"),
                2L, member(2, "n2", "127.0.0.1:7102"), 3L, member(3, "n3", "127.0.0.1:7103"));

        Map<Long, RegisteredMember> out = MembershipRequests.withConfigured(known, configured);

        assertEquals(member(2, "n2", "127.0.0.1:7102"), out.get(2L), "not published: from the initial cluster");
        assertEquals(member(3, "n3", "127.0.0.1:7103"), out.get(3L));
        assertEquals(member(4, "n4", "127.0.0.1:7104"), out.get(4L), "added later: as the registry says");
        assertEquals(4, out.size());
    }

    @Test
    void whatIsKnownWinsOverTheInitialCluster() {
        Map<Long, RegisteredMember> known = Map.of(2L, member(2, "n2", "10.0.0.2:7102"),
                3L, member(3, "", ""));
        Map<Long, RegisteredMember> configured = Map.of(2L, member(2, "n2", "127.0.0.1:7102"),
                3L, member(3, "n3", "127.0.0.1:7103"));

        Map<Long, RegisteredMember> out = MembershipRequests.withConfigured(known, configured);

        assertEquals("10.0.0.2:7102", out.get(2L).getPeerAddress(), "moved by `member update`: the new address");
        assertEquals(member(3, "n3", "127.0.0.1:7103"), out.get(3L), "an empty entry is filled");
        assertEquals(known, MembershipRequests.withConfigured(known, Map.of()));
    }
}
