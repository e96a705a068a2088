package io.rota.server.kv;

import io.rota.proto.Member;
import io.rota.proto.RegisteredMember;

import java.util.List;

/**
 * Hears the replicated member tables change (issue 13): a member registered, retired or published, or the
 * state restored from a snapshot. The server keeps its peer transport's table and its "who has joined"
 * view from it. Called on the driver thread; must not block.
 */
public interface MemberRegistryListener {

    /** No one listens. */
    MemberRegistryListener NONE = (registry, published) -> { };

    /** The registry ({@code registry}, by id) or the published members ({@code published}, by id) changed. */
    void membersChanged(List<RegisteredMember> registry, List<Member> published);
}
