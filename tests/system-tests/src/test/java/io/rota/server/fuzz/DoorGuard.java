package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a well-formed fuzz run may send without spoiling its own checks, shared by every door of one run (the
 * budgets are the cluster's, whichever door spends them). The generator ({@link WellFormedRequests}) is free;
 * this shapes each generated request, in place, before it is sent:
 *
 * <ul>
 *   <li><b>Quorum.</b> The cluster has {@code members} voters, all running. A voter added at an address where
 *       nothing runs makes N+1 voters of which N run: for 3 that is 4 needing 3, still fine, but a second such
 *       voter (5 needing 3 with 3 running) leaves no margin and a third (6 needing 4) loses quorum. So at most
 *       {@value #PHANTOM_VOTERS} request that could make a phantom voter is sent per run — a member add with
 *       learner = false (whatever its address: the server may accept one the test thinks is wrong) or a
 *       promote of an id above the members' (a learner the fuzz added: the server must refuse it as behind,
 *       but the test does not count on that); every other add is made a learner add. Learners never count
 *       towards quorum; adds with an address that could be taken for a real one are bounded too
 *       ({@value #PHANTOM_LEARNERS}), so the leader does not dial too many hosts that are not there.</li>
 *   <li><b>The real members stay as they are.</b> No remove of ids 1..members. A member update or a
 *       PublishMember naming a real member carries only addresses no lenient parser takes for host:port
 *       ({@link WellFormedRequests#plausible}, non-empty): the server must refuse them, and if it took one
 *       the test would see it. Moves of the leadership to a real member are bounded
 *       ({@value #LEADER_MOVES}: each is an election); to any other id they are free (refused).</li>
 *   <li><b>The test's data.</b> A write's key is under {@link WellFormedRequests#PREFIX} or empty (the
 *       generator's promise); a delete with an empty key loses its range end (from "" it would reach the
 *       test's keys), at any depth of a txn. Sessions never name the small client ids real clients hold.</li>
 *   <li><b>Auth.</b> With auth off, no enable (it would lock the test out) and no change naming a protected
 *       user or role ({@code root}, the test's own); as root with auth on, no disable and again no change to
 *       the protected names; as a user without permissions, everything (all of it must be refused — but the
 *       membership rules above still hold, in case it is not).</li>
 * </ul>
 */
public final class DoorGuard {

    /** Who sends the requests, for the auth rules. */
    public enum Caller { AUTH_OFF, ROOT, UNPRIVILEGED }

    static final int PHANTOM_VOTERS = 1;
    static final int PHANTOM_LEARNERS = 6;
    static final int LEADER_MOVES = 8;
    private static final long REAL_CLIENT_IDS = 1L << 20;

    private final int members;
    private final Set<String> protectedNames;
    private final AtomicInteger voters = new AtomicInteger(PHANTOM_VOTERS);
    private final AtomicInteger learners = new AtomicInteger(PHANTOM_LEARNERS);
    private final AtomicInteger moves = new AtomicInteger(LEADER_MOVES);
    private final Tally tally;

    /**
     * @param members        the cluster size (ids 1..members are the real members)
     * @param protectedNames users and roles the test itself uses (root is always protected)
     * @param tally          where the guard counts what it changed ({@code guard/...})
     */
    public DoorGuard(int members, Set<String> protectedNames, Tally tally) {
        this.members = members;
        this.protectedNames = new java.util.HashSet<>(protectedNames);
        this.protectedNames.add("root");
        this.tally = tally;
    }

    /**
     * Shapes {@code request} (any request message of Rota's client protocol or etcd's API, or a whole Frame)
     * so it keeps the rules, or returns false if it must not be sent at all (draw another).
     */
    public boolean admit(Message.Builder request, Caller caller, Random random) {
        String type = request.getDescriptorForType().getName();
        if (type.equals("Frame")) {
            FieldDescriptor session = request.getDescriptorForType().findFieldByName("session");
            if (request.hasField(session)) {
                Message.Builder s = request.getFieldBuilder(session);
                FieldDescriptor id = s.getDescriptorForType().findFieldByName("client_id");
                long c = (Long) s.getField(id);
                if (c > 0 && c < REAL_CLIENT_IDS) {
                    s.setField(id, c + REAL_CLIENT_IDS);
                }
            }
        }
        return walk(request, caller, random);
    }

    private boolean walk(Message.Builder b, Caller caller, Random random) {
        if (!shape(b, caller, random)) {
            return false;
        }
        for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
            if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE || f.isMapField()) {
                continue;
            }
            if (f.isRepeated()) {
                for (int i = 0; i < b.getRepeatedFieldCount(f); i++) {
                    if (!walk(b.getRepeatedFieldBuilder(f, i), caller, random)) {
                        return false;
                    }
                }
            } else if (b.hasField(f) && !walk(b.getFieldBuilder(f), caller, random)) {
                return false;
            }
        }
        return true;
    }

    private boolean shape(Message.Builder b, Caller caller, Random random) {
        String type = b.getDescriptorForType().getName();
        switch (type) {
            case "DeleteRangeRequest" -> {
                FieldDescriptor key = field(b, "key");
                FieldDescriptor end = field(b, "range_end");
                if (((ByteString) b.getField(key)).isEmpty() && !((ByteString) b.getField(end)).isEmpty()) {
                    b.clearField(end);
                    tally.add("guard/empty-key-delete-range-end-cleared");
                }
                return true;
            }
            case "MemberAddRequest" -> {
                return memberAdd(b, random);
            }
            case "MemberRemoveRequest" -> {
                long id = (Long) b.getField(idField(b));
                return !realMember(id) || refuse("guard/remove-of-a-real-member");
            }
            case "MemberPromoteRequest" -> {
                long id = (Long) b.getField(idField(b));
                if (id > members && id < 1_000 && voters.getAndDecrement() <= 0) {
                    b.setField(idField(b), 0L);
                    tally.add("guard/promote-past-the-voter-budget-made-id-0");
                }
                return true;
            }
            case "MemberUpdateRequest" -> {
                return memberUpdate(b, random);
            }
            case "MoveLeaderRequest" -> {
                FieldDescriptor t = b.getDescriptorForType().getFields().get(0);
                if (realMember((Long) b.getField(t)) && moves.getAndDecrement() <= 0) {
                    b.setField(t, 0L);
                    tally.add("guard/leader-move-past-the-budget-made-target-0");
                }
                return true;
            }
            case "PublishMemberRequest" -> {
                return true;   // its Member is shaped below, as "Member"
            }
            case "Member" -> {
                // Rota's published Member (etcd's Member is never a request's part).
                FieldDescriptor id = b.getDescriptorForType().findFieldByName("id");
                if (id != null && realMember((Long) b.getField(id))) {
                    for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
                        if (f.getName().endsWith("address") && !harmless((String) b.getField(f))) {
                            b.setField(f, harmlessAddress(random));
                            tally.add("guard/publish-of-a-real-member-address-replaced");
                        }
                    }
                }
                return true;
            }
            default -> {
                if (type.startsWith("Auth")) {
                    return auth(b, type, caller);
                }
                return true;
            }
        }
    }

    private boolean memberAdd(Message.Builder b, Random random) {
        FieldDescriptor learner = b.getDescriptorForType().findFieldByName("learner");
        if (learner == null) {
            learner = b.getDescriptorForType().findFieldByName("isLearner");
        }
        if (!(Boolean) b.getField(learner)) {
            if (voters.getAndDecrement() > 0) {
                tally.add("guard/voter-add-sent");
                return true;
            }
            b.setField(learner, true);
            tally.add("guard/voter-add-made-learner");
        }
        if (couldBeTakenForAnAddress(b) && learners.getAndDecrement() <= 0) {
            setAddress(b, harmlessAddress(random));
            tally.add("guard/learner-add-past-the-budget-address-replaced");
        }
        return true;
    }

    private boolean memberUpdate(Message.Builder b, Random random) {
        if (!realMember((Long) b.getField(idField(b)))) {
            return true;
        }
        if (couldBeTakenForAnAddress(b)) {
            setAddress(b, harmlessAddress(random));
            tally.add("guard/update-of-a-real-member-address-replaced");
        }
        return true;
    }

    /** Rota's peer_address, or etcd's peerURLs as ClusterService reads them (exactly one URL with host and port). */
    private static boolean couldBeTakenForAnAddress(Message.Builder b) {
        FieldDescriptor peer = b.getDescriptorForType().findFieldByName("peer_address");
        if (peer != null) {
            return !harmless((String) b.getField(peer));
        }
        FieldDescriptor urls = b.getDescriptorForType().findFieldByName("peerURLs");
        @SuppressWarnings("unchecked")
        List<String> list = (List<String>) b.getField(urls);
        if (list.size() != 1) {
            return false;
        }
        try {
            URI u = new URI(list.get(0));
            return u.getHost() != null && u.getPort() >= 0 || u.getHost() == null && u.getAuthority() != null;
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static void setAddress(Message.Builder b, String address) {
        FieldDescriptor peer = b.getDescriptorForType().findFieldByName("peer_address");
        if (peer != null) {
            b.setField(peer, address);
        } else {
            FieldDescriptor urls = b.getDescriptorForType().findFieldByName("peerURLs");
            b.setField(urls, List.of(address));   // no scheme: not a URL with a host (refused)
        }
    }

    /** Not empty, and no lenient parser makes an address of it (nor of it behind {@code http://}). */
    static boolean harmless(String address) {
        return !address.isEmpty() && !WellFormedRequests.plausible(address) && !address.contains("://");
    }

    static String harmlessAddress(Random random) {
        String[] bad = {"n4:71010", "h:", "h:-1", "h:65536", ":", "h:port", "h:0", "h:99999999999"};
        return bad[random.nextInt(bad.length)];
    }

    private boolean auth(Message.Builder b, String type, Caller caller) {
        String t = type.toLowerCase(Locale.ROOT);
        boolean change = !(t.contains("authenticate") || t.contains("get") || t.contains("list")
                || t.contains("status") || t.equals("authrequest") || t.endsWith("response"));
        if (!change || caller == Caller.UNPRIVILEGED) {
            return true;
        }
        if (t.contains("enable") && caller == Caller.AUTH_OFF) {
            return refuse("guard/auth-enable-with-auth-off");
        }
        if (t.contains("disable") && caller == Caller.ROOT) {
            return refuse("guard/auth-disable-as-root");
        }
        for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
            if (f.getJavaType() == FieldDescriptor.JavaType.STRING && !f.isRepeated()
                    && (f.getName().equals("name") || f.getName().equals("user") || f.getName().equals("role"))
                    && protectedNames.contains((String) b.getField(f))) {
                return refuse("guard/auth-change-of-a-protected-name");
            }
        }
        return true;
    }

    private boolean realMember(long id) {
        return id >= 1 && id <= members;
    }

    private boolean refuse(String why) {
        tally.add(why);
        return false;
    }

    private static FieldDescriptor field(Message.Builder b, String name) {
        FieldDescriptor f = b.getDescriptorForType().findFieldByName(name);
        if (f == null) {
            throw new IllegalArgumentException(b.getDescriptorForType().getName() + " has no " + name);
        }
        return f;
    }

    private static FieldDescriptor idField(Message.Builder b) {
        FieldDescriptor f = b.getDescriptorForType().findFieldByName("id");
        return f != null ? f : field(b, "ID");
    }
}
