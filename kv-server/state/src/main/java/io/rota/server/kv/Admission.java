package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.Member;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.facts.BadValueException;
import io.rota.proto.facts.HostPort;
import io.rota.proto.facts.MemberName;

import java.util.Optional;

/**
 * The check of a command's own values, the same on both sides of the log (issue 30): the leader runs it
 * before proposing, so a bad request is refused at the door and nothing it refuses reaches the log; apply
 * runs it again, so an entry that came past the leader (an older leader, a hand-built log) is refused the
 * same way on every member, never thrown on. Pure: no state, clock or I/O — what needs the state (a taken
 * name, a removed id, a missing lease) is apply's to refuse.
 *
 * <p>Today the members' tables are what it checks: their addresses and names leave apply as effects (the
 * peer directory dials them), so a value that cannot be dialled must never be applied.
 */
public final class Admission {

    /**
     * No member id reaches this: the registry hands out one above every id used, and that count must never
     * overflow (a member restored from a snapshot would count on from elsewhere, and ids would be reused).
     */
    static final long MAX_MEMBER_ID = Long.MAX_VALUE;

    private Admission() {
    }

    /** Why {@code cmd} is refused, as the typed error a client gets; empty when its values are well formed. */
    public static Optional<Error> check(Command cmd) {
        try {
            switch (cmd.getOpCase()) {
                case PUBLISH_MEMBER -> publish(cmd.getPublishMember().getMember());
                case REGISTER_MEMBER -> register(cmd.getRegisterMember());
                case UPDATE_MEMBER -> {
                    HostPort.parse("peer address", cmd.getUpdateMember().getPeerAddress());
                    range(cmd.getUpdateMember().getId());
                }
                case RETIRE_MEMBER -> range(cmd.getRetireMember().getId());
                default -> {
                }
            }
            return Optional.empty();
        } catch (BadValueException e) {
            return Optional.of(Error.newBuilder().setCode(Error.Code.INVALID_ARGUMENT).setMessage(e.getMessage()).build());
        }
    }

    /** {@link #check}, thrown: for apply's own refusal path. */
    static void require(Command cmd) {
        Optional<Error> refusal = check(cmd);
        if (refusal.isPresent()) {
            throw new StoreException(refusal.get());
        }
    }

    private static void publish(Member m) {
        id(m.getId());
        MemberName.check("member name", m.getName());
        HostPort.parse("client address", m.getClientAddress());
        optional("peer address", m.getPeerAddress());
        optional("http address", m.getHttpAddress());
        optional("etcd address", m.getEtcdAddress());
    }

    private static void register(RegisterMemberRequest r) {
        if (r.getIdFloor() < 0 || r.getIdFloor() >= MAX_MEMBER_ID - 1) {
            throw new BadValueException("id_floor " + Long.toUnsignedString(r.getIdFloor()) + " leaves no member id");
        }
        MemberName.check("member name", r.getName());
        HostPort.parse("peer address", r.getPeerAddress());
        optional("client address", r.getClientAddress());
    }

    private static void id(long id) {
        if (id == 0) {   // an id that is not there is apply's to refuse; 0 is never one
            throw new BadValueException("member id 0 does not exist; ids start at 1");
        }
        range(id);
    }

    /** Ids above {@link #MAX_MEMBER_ID} - 1 are never handed out; one would overflow the registry's count. */
    private static void range(long id) {
        if (id < 0 || id >= MAX_MEMBER_ID) {
            throw new BadValueException("member id " + Long.toUnsignedString(id) + " is out of range 1–"
                    + (MAX_MEMBER_ID - 1));
        }
    }

    private static void optional(String field, String address) {
        if (!address.isEmpty()) {
            HostPort.parse(field, address);
        }
    }
}
