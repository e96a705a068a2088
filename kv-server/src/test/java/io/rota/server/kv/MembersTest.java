package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisteredMember;
import io.rota.proto.RetireMemberRequest;
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

    private static Command.Builder register(String name, String peer, long floor) {
        return Command.newBuilder().setRegisterMember(RegisterMemberRequest.newBuilder().setName(name)
                .setPeerAddress(peer).setLearner(true).setIdFloor(floor));
    }

    @Test
    void theRegistryAssignsIdsAboveEveryIdEverUsedAndNeverReusesOne() {
        Harness h = new Harness();
        h.run(publish(member(1, "127.0.0.1:7001")));
        RegisteredMember n4 = h.run(register("n4", "127.0.0.1:7104", 3)).getRegisterMember().getMember();
        assertEquals(4, n4.getId(), "above the leader's configuration {1,2,3}");
        assertEquals(n4, h.run(register("n4", "127.0.0.1:7104", 3)).getRegisterMember().getMember(),
                "a retried add gets the same entry");
        assertEquals("NAME_TAKEN", h.run(register("n4", "127.0.0.1:9999", 3)).getError().getMembershipRefusal());
        assertEquals("NAME_TAKEN", h.run(register("n1", "127.0.0.1:9998", 3)).getError().getMembershipRefusal());
        h.run(Command.newBuilder().setRetireMember(RetireMemberRequest.newBuilder().setId(4)));
        RegisteredMember again = h.run(register("n4", "127.0.0.1:7104", 3)).getRegisterMember().getMember();
        assertEquals(5, again.getId(), "id 4 was retired: never handed out again");
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(publish(member(4, "127.0.0.1:7004"))).getError().getCode(),
                "a removed member cannot publish itself back");

        Harness copy = new Harness();
        copy.sm.restore(h.sm.capture().serialize());
        assertEquals(h.sm.registry(), copy.sm.registry());
        assertEquals(6, copy.run(register("n6", "127.0.0.1:7106", 0)).getRegisterMember().getMember().getId(),
                "the next id survives a snapshot");
    }
}
