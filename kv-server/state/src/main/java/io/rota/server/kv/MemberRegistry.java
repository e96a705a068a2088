package io.rota.server.kv;

import io.rota.proto.Error;
import io.rota.proto.Member;
import io.rota.proto.MemberUpdateResponse;
import io.rota.proto.PublishMemberResponse;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisterMemberResponse;
import io.rota.proto.RegisteredMember;
import io.rota.proto.RetireMemberResponse;
import io.rota.proto.StoreSnapshot;
import io.rota.proto.UpdateMemberRequest;

import java.util.List;
import java.util.TreeMap;

/**
 * The replicated member tables and their commands: the published members (etcd's member attributes, so every
 * member can forward writes) and the member registry of issue 13 (`member add`, `member remove`, `member
 * update`). Each change leaves apply as an {@link Effects.MembersChanged} for the server's peer table. Driver
 * thread only.
 */
final class MemberRegistry {

    /** Published members by id (etcd's member attributes); replicated so every member can forward writes. */
    private final TreeMap<Long, Member> members = new TreeMap<>();
    /**
     * The member registry (issue 13), by id: every member `member add` registered, and every member removed
     * (a bootstrap member enters it when removed). Ids are never reused: {@link #nextMemberId} only grows.
     */
    private final TreeMap<Long, RegisteredMember> registry = new TreeMap<>();
    private long nextMemberId = 1;
    private final KvStore store;
    private final Effects effects;

    MemberRegistry(KvStore store, Effects effects) {
        this.store = store;
        this.effects = effects;
    }

    /** A member announces (or re-announces) its addresses; the latest announcement wins. No revision. */
    PublishMemberResponse publish(Member member) {
        RegisteredMember registered = registry.get(member.getId());
        if (registered != null && registered.getRemoved()) {
            throw StoreException.invalid("member " + member.getId() + " was removed from the cluster; its id is"
                    + " never used again");
        }
        members.put(member.getId(), member);
        nextMemberId = Math.max(nextMemberId, member.getId() + 1);
        registryChanged();
        return PublishMemberResponse.newBuilder().setHeader(store.header()).build();
    }

    /**
     * `member add`'s first step: an entry with a new id, one above every id ever registered, published or in
     * the proposing leader's configuration ({@code id_floor}), so an id is never handed out twice. A retry
     * (same name and peer address, not removed) gets the same entry back. Names and peer addresses are
     * unique among the members not removed.
     */
    RegisterMemberResponse register(RegisterMemberRequest req) {
        for (RegisteredMember r : registry.values()) {
            if (r.getRemoved()) {
                continue;
            }
            if (r.getName().equals(req.getName()) && r.getPeerAddress().equals(req.getPeerAddress())) {
                return RegisterMemberResponse.newBuilder().setHeader(store.header()).setMember(r).build();
            }
            if (r.getName().equals(req.getName()) || r.getPeerAddress().equals(req.getPeerAddress())) {
                throw nameTaken("member " + r.getId() + " (" + r.getName() + " at " + r.getPeerAddress()
                        + ") already has that name or peer address");
            }
        }
        for (Member m : members.values()) {
            if (m.getName().equals(req.getName()) || m.getPeerAddress().equals(req.getPeerAddress())) {
                throw nameTaken("member " + m.getId() + " (" + m.getName() + " at " + m.getPeerAddress()
                        + ") already has that name or peer address");
            }
        }
        long id = Math.max(nextMemberId, req.getIdFloor() + 1);
        if (id >= Admission.MAX_MEMBER_ID) {
            throw StoreException.invalid("no member id is left above " + (id - 1));
        }
        RegisteredMember entry = RegisteredMember.newBuilder().setId(id).setName(req.getName())
                .setPeerAddress(req.getPeerAddress()).setClientAddress(req.getClientAddress())
                .setLearner(req.getLearner()).build();
        registry.put(id, entry);
        nextMemberId = id + 1;
        registryChanged();
        return RegisterMemberResponse.newBuilder().setHeader(store.header()).setMember(entry).build();
    }

    /** `member remove`'s last step: the id is marked removed for good, and no longer published. */
    RetireMemberResponse retire(long id) {
        if (id == 0) {
            throw StoreException.invalid("member id 0 does not exist");
        }
        RegisteredMember entry = registry.get(id);
        Member published = members.remove(id);
        RegisteredMember.Builder retired = entry != null ? entry.toBuilder()
                : RegisteredMember.newBuilder().setId(id);
        if (entry == null && published != null) {
            retired.setName(published.getName()).setPeerAddress(published.getPeerAddress())
                    .setClientAddress(published.getClientAddress());
        }
        registry.put(id, retired.setRemoved(true).build());
        nextMemberId = Math.max(nextMemberId, id + 1);
        registryChanged();
        return RetireMemberResponse.newBuilder().setHeader(store.header()).build();
    }

    /**
     * `member update` (etcd's MemberUpdate): member {@code id} is dialled at a new peer address from now on.
     * Both tables are rewritten, the registry entry (made from the publication, or from the id alone for a
     * bootstrap member that never published) and the publication, so that they agree: the peer directory
     * reads both, and an older publication must not put the old address back (design Y31). The member's name
     * and client address stay. Refused: a removed id, an id neither table knows unless the proposing leader's
     * configuration has it, an address that is not host:port, one another member has.
     */
    MemberUpdateResponse update(UpdateMemberRequest req) {
        long id = req.getId();
        String peer = req.getPeerAddress();
        RegisteredMember entry = registry.get(id);
        Member published = members.get(id);
        if (id == 0 || (entry != null && entry.getRemoved())
                || (entry == null && published == null && !req.getInConfiguration())) {
            throw new StoreException(Error.newBuilder().setCode(Error.Code.MEMBERSHIP_REFUSED)
                    .setMembershipRefusal("NOT_A_MEMBER").setMessage("member " + id + (entry != null
                            ? " was removed from the cluster" : " is not a member of the cluster")).build());
        }
        for (RegisteredMember r : registry.values()) {
            if (r.getId() != id && !r.getRemoved() && r.getPeerAddress().equals(peer)) {
                throw nameTaken("member " + r.getId() + " (" + r.getName() + ") already has peer address " + peer);
            }
        }
        for (Member m : members.values()) {
            if (m.getId() != id && m.getPeerAddress().equals(peer)) {
                throw nameTaken("member " + m.getId() + " (" + m.getName() + ") already has peer address " + peer);
            }
        }
        RegisteredMember.Builder updated = entry != null ? entry.toBuilder() : RegisteredMember.newBuilder().setId(id);
        if (entry == null && published != null) {
            updated.setName(published.getName()).setClientAddress(published.getClientAddress());
        }
        RegisteredMember after = updated.setPeerAddress(peer).build();
        registry.put(id, after);
        if (published != null) {
            members.put(id, published.toBuilder().setPeerAddress(peer).build());
        }
        nextMemberId = Math.max(nextMemberId, id + 1);
        registryChanged();
        return MemberUpdateResponse.newBuilder().setHeader(store.header()).setMember(after).build();
    }

    private static StoreException nameTaken(String message) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.MEMBERSHIP_REFUSED).setMessage(message)
                .setMembershipRefusal("NAME_TAKEN").build());
    }

    private void registryChanged() {
        effects.add(new Effects.MembersChanged(List.copyOf(registry.values()), List.copyOf(members.values())));
    }

    /** The member registry (issue 13), by id, removed members included. */
    List<RegisteredMember> registry() {
        return List.copyOf(registry.values());
    }

    /** The published members, by id. */
    List<Member> members() {
        return List.copyOf(members.values());
    }

    /** Both tables and the next id, into a snapshot image. */
    void writeTo(StoreSnapshot.Builder image) {
        image.addAllMembers(members.values()).addAllRegistry(registry.values()).setNextMemberId(nextMemberId);
    }

    /** Both tables and the next id from a snapshot image; the peer table hears of them. */
    void restore(StoreSnapshot image) {
        members.clear();
        image.getMembersList().forEach(m -> members.put(m.getId(), m));
        registry.clear();
        image.getRegistryList().forEach(r -> registry.put(r.getId(), r));
        // A snapshot from before the registry has no next id: one above every id it names.
        nextMemberId = Math.max(image.getNextMemberId(), 1);
        members.keySet().forEach(id -> nextMemberId = Math.max(nextMemberId, id + 1));
        registryChanged();
    }
}
