package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PublishMember (etcd's publish): the latest announcement wins, no revision, and snapshots keep it. */
class MembersTest {

    private static Member member(long id, String client) {
        return Member.newBuilder().setId(id).setName("n" + id).setClientAddress(client)
                .setPeerAddress("127.0.0.1:710" + id).build();
    }

    private static Command.Builder publish(Member m) {
        return Command.newBuilder().setPublishMember(PublishMemberRequest.newBuilder().setMember(m));
    }

    @Test
    void theLatestAnnouncementWinsWithoutARevisionAndSurvivesASnapshot() {
        Harness h = new Harness();
        long revision = h.sm.revision();
        assertTrue(h.run(publish(member(2, "127.0.0.1:7002"))).hasPublishMember());
        h.run(publish(member(1, "127.0.0.1:7001")));
        h.run(publish(member(2, "127.0.0.1:9002")));
        assertEquals(List.of(member(1, "127.0.0.1:7001"), member(2, "127.0.0.1:9002")), h.sm.members());
        assertEquals(revision, h.sm.revision(), "publishing writes no revision");

        Harness copy = new Harness();
        copy.sm.restore(h.sm.capture().serialize());
        assertEquals(h.sm.members(), copy.sm.members());
    }

    @Test
    void aMemberWithoutIdOrClientAddressIsRefused() {
        Harness h = new Harness();
        assertEquals(Error.Code.INVALID_ARGUMENT,
                h.run(publish(member(0, "127.0.0.1:7001"))).getError().getCode());
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(publish(member(1, ""))).getError().getCode());
        assertTrue(h.sm.members().isEmpty());
    }
}
