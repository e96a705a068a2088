package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisteredMember;
import io.rota.proto.RetireMemberRequest;
import io.rota.proto.UpdateMemberRequest;
import io.rota.proto.CommandResult;
import io.rota.raft.core.Entry;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PublishMember (etcd's publish): the latest announcement wins, no revision, and snapshots keep it; the member
 * registry; UpdateMember (etcd's MemberUpdate) rewrites a member's peer address in both tables.
 */
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

    private static Command.Builder update(long id, String peer, boolean inConfiguration) {
        return Command.newBuilder().setUpdateMember(UpdateMemberRequest.newBuilder().setId(id).setPeerAddress(peer)
                .setInConfiguration(inConfiguration));
    }

    @Test
    void anUpdateRewritesTheRegistryAndThePublicationAndSurvivesASnapshot() {
        Harness h = new Harness();
        h.run(publish(member(1, "127.0.0.1:7001")));
        h.run(publish(member(2, "127.0.0.1:7002")));
        long revision = h.sm.revision();

        RegisteredMember moved = h.run(update(2, "127.0.0.1:9102", true)).getUpdateMember().getMember();
        assertEquals(RegisteredMember.newBuilder().setId(2).setName("n2").setPeerAddress("127.0.0.1:9102")
                .setClientAddress("127.0.0.1:7002").build(), moved, "the entry is made from the publication");
        assertEquals(List.of(moved), h.sm.registry());
        assertEquals("127.0.0.1:9102", h.sm.members().get(1).getPeerAddress(),
                "the publication agrees, so an older one cannot put the old address back");
        assertEquals("127.0.0.1:7002", h.sm.members().get(1).getClientAddress());
        assertEquals(revision, h.sm.revision(), "an update writes no revision");

        // A bootstrap member that never published: the leader's configuration vouches for it.
        RegisteredMember three = h.run(update(3, "127.0.0.1:9103", true)).getUpdateMember().getMember();
        assertEquals(RegisteredMember.newBuilder().setId(3).setPeerAddress("127.0.0.1:9103").build(), three);

        Harness copy = new Harness();
        copy.sm.restore(h.sm.capture().serialize());
        assertEquals(h.sm.registry(), copy.sm.registry());
        assertEquals(h.sm.members(), copy.sm.members());
        assertEquals(4, copy.run(register("n4", "127.0.0.1:7104", 0)).getRegisterMember().getMember().getId(),
                "the updated ids count as used");
    }

    @Test
    void anUnknownOrRemovedIdABadAddressOrATakenOneIsRefused() {
        Harness h = new Harness();
        h.run(publish(member(1, "127.0.0.1:7001")));
        h.run(publish(member(2, "127.0.0.1:7002")));
        assertEquals("NOT_A_MEMBER", h.run(update(9, "127.0.0.1:9109", false)).getError().getMembershipRefusal());
        assertEquals("NOT_A_MEMBER", h.run(update(0, "127.0.0.1:9100", true)).getError().getMembershipRefusal());
        h.run(Command.newBuilder().setRetireMember(RetireMemberRequest.newBuilder().setId(2)));
        Error removed = h.run(update(2, "127.0.0.1:9102", true)).getError();
        assertEquals("NOT_A_MEMBER", removed.getMembershipRefusal());
        assertTrue(removed.getMessage().contains("was removed"), removed.getMessage());
        for (String bad : List.of("", "127.0.0.1", "127.0.0.1:", ":7001", "127.0.0.1:0", "127.0.0.1:70000",
                "host:port", "a:1,b:2", "h st:1")) {
            Error e = h.run(update(1, bad, true)).getError();
            assertEquals(Error.Code.INVALID_ARGUMENT, e.getCode(), bad);
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        h.run(register("n5", "127.0.0.1:7105", 2));
        assertEquals("NAME_TAKEN", h.run(update(1, "127.0.0.1:7105", true)).getError().getMembershipRefusal());
        assertEquals("127.0.0.1:7101", h.sm.members().get(0).getPeerAddress(), "nothing changed");
        assertEquals("127.0.0.1:7101", h.run(update(1, "127.0.0.1:7101", true)).getUpdateMember().getMember()
                .getPeerAddress(), "its own address again is no conflict");
    }

    /** What the server's peer directory does with the tables: dial every address (it threw on a bad one). */
    private static MemberRegistryListener dialling(List<String> dialled) {
        return (registry, published) -> {
            registry.forEach(r -> dialled.add(io.rota.proto.facts.HostPort.parse("peer", r.getPeerAddress()).toString()));
            published.forEach(m -> dialled.add(io.rota.proto.facts.HostPort.parse("peer", m.getPeerAddress()).toString()));
        };
    }

    @Test
    @DisplayName("issue 30: member add n4:71010 is refused by apply itself, on every member alike, and never dialled")
    void aTypoedPeerAddressIsRefusedAtApply() {
        Harness h = new Harness();
        List<String> dialled = new java.util.ArrayList<>();
        h.sm.setRegistryListener(dialling(dialled));
        Error e = h.run(register("n4", "n4:71010", 3)).getError();
        assertEquals(Error.Code.INVALID_ARGUMENT, e.getCode());
        assertEquals("peer address 'n4:71010': port 71010 is out of range 1–65535", e.getMessage());
        assertTrue(h.sm.registry().isEmpty());
        assertTrue(dialled.isEmpty(), "nothing reached the peer directory");
        for (Member bad : List.of(member(5, "127.0.0.1:7005").toBuilder().setPeerAddress("n5:71010").build(),
                member(5, "127.0.0.1:99999"), member(5, "127.0.0.1:7005").toBuilder().setName("n 5").build(),
                member(5, "127.0.0.1:7005").toBuilder().setEtcdAddress("h:").build(),
                member(5, "127.0.0.1:7005").toBuilder().setHttpAddress("a,b:1").build())) {
            assertEquals(Error.Code.INVALID_ARGUMENT, h.run(publish(bad)).getError().getCode(), bad.toString());
        }
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(update(1, "n1:0", true)).getError().getCode());
        assertTrue(h.sm.members().isEmpty());
        assertTrue(h.run(register("n4", "n4:7104", 3)).hasRegisterMember(), "the corrected add applies");
        assertEquals(List.of("n4:7104"), dialled);
    }

    @Test
    @DisplayName("issue 30: an effect that fails after apply is logged; apply answers and the next entry applies")
    void aFailingEffectNeverStopsApply() {
        Harness h = new Harness();
        h.sm.setRegistryListener((registry, published) -> {
            throw new IllegalStateException("the peer table is broken");
        });
        h.sm.setListener((revision, events) -> {
            throw new IllegalStateException("the watch hub is broken");
        });
        assertTrue(h.run(register("n4", "n4:7104", 3)).hasRegisterMember());
        assertEquals(1, h.sm.registry().size(), "the replicated state is applied all the same");
        long before = h.sm.revision();
        assertTrue(h.run(Command.newBuilder().setPut(io.rota.proto.PutRequest.newBuilder().setKey(Harness.b("k"))
                .setValue(Harness.b("v")))).hasPut());
        assertEquals(before + 1, h.sm.revision(), "the put applied, its watch event's failure only logged");
    }

    @Test
    @DisplayName("issue 30: bytes that are no Command are refused, not thrown on")
    void aMalformedEntryIsRefused() {
        Harness h = new Harness();
        CommandResult r = h.sm.apply(List.of(Entry.command(1, 1, new byte[] {(byte) 0xff, (byte) 0xff}))).get(0);
        assertEquals(Error.Code.INVALID_ARGUMENT, r.getError().getCode());
    }

    @Test
    @DisplayName("issue 30 (sweep seed 30, 5 members): the registry's id count never overflows, so restore counts alike")
    void memberIdsNearTheTopAreRefused() {
        Harness h = new Harness();
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(register("n4", "n4:7104", Long.MAX_VALUE - 1)).getError().getCode());
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(register("n4", "n4:7104", -1)).getError().getCode());
        assertEquals(Error.Code.INVALID_ARGUMENT, h.run(publish(member(-1, "127.0.0.1:7001").toBuilder()
                .setPeerAddress("127.0.0.1:7101").build())).getError().getCode());
        assertTrue(h.run(publish(member(Long.MAX_VALUE - 1, "127.0.0.1:7001").toBuilder()
                .setPeerAddress("127.0.0.1:7101").build())).hasPublishMember());
        Error full = h.run(register("n4", "n4:7104", 3)).getError();
        assertEquals(Error.Code.INVALID_ARGUMENT, full.getCode());
        assertTrue(full.getMessage().contains("no member id is left"), full.getMessage());
        Harness copy = new Harness();
        copy.sm.restore(h.sm.capture().serialize());
        assertEquals(h.run(register("n5", "n5:7105", 3)).getError(), copy.run(register("n5", "n5:7105", 3)).getError());
    }
}
