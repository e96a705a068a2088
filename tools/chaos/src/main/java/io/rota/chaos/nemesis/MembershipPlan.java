package io.rota.chaos.nemesis;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/**
 * The bookkeeping and the choices of the {@link MembershipNemesis}, with no process or network in it (so the
 * rules are unit-tested): which members exist (by {@code ProcessCluster} index and Raft member id), which are
 * voters, what to change next and in which order.
 *
 * <p>The rules it keeps:
 * <ul>
 *   <li>Between {@link #MIN_VOTERS} and {@link #MAX_VOTERS} voters after every single operation, not only
 *       after every step: a replacement at three voters adds and promotes the newcomer <i>before</i> it
 *       removes the dead member ({@link #operations}), so the configuration never shrinks to two voters of
 *       which one is dead. With one member dead at most (the nemesis kills no one else), a majority of the
 *       configuration in force is always up.</li>
 *   <li>Member ids and process indexes are never reused: {@link #added} refuses an id or an index it has seen
 *       (the server promises ids unique forever; the nemesis checks it).</li>
 *   <li>Only voters are removed or replaced; a learner exists only inside a step (added, then promoted or,
 *       if it never catches up, removed again — and if even that is refused, the next step removes it).</li>
 * </ul>
 */
public final class MembershipPlan {

    /** Fewest voters between operations: a majority survives one dead member. */
    public static final int MIN_VOTERS = 3;
    /** Most voters between operations. */
    public static final int MAX_VOTERS = 5;
    /** Most members at once: the voters plus one learner being added. */
    public static final int MAX_MEMBERS = MAX_VOTERS + 1;

    /** What a step does to the cluster. */
    public enum Kind {
        /** Add a new member as a learner, wait until it caught up, promote it. */
        GROW,
        /** Remove a voter (sometimes the leader) and stop its process. */
        SHRINK,
        /** kill -9 a voter, delete its data dir (a dead disk), remove it and add a new member in its place. */
        REPLACE
    }

    /**
     * One step.
     *
     * @param kind   what it does
     * @param target the member removed or replaced (a process index), or -1 for {@link Kind#GROW}
     * @param leader whether the target was the leader when chosen
     */
    public record Step(Kind kind, int target, boolean leader) {
    }

    /** One operation of a step, in the order the nemesis runs them. */
    public enum Op {
        /** kill -9 the target and delete its data directory. */
        KILL_AND_WIPE,
        /** Remove the target from the configuration (then stop its process if it still runs). */
        REMOVE,
        /** Add a new member as a learner and start it with {@code --initial-cluster-state existing}. */
        ADD_LEARNER,
        /** Promote the learner once it caught up. */
        PROMOTE
    }

    /**
     * A member as the plan knows it.
     *
     * @param index its process index in the {@code ProcessCluster} (its name is {@code n(index+1)})
     * @param id    its Raft member id
     * @param voter a voter rather than a learner
     */
    public record Member(int index, long id, boolean voter) {
    }

    private final Map<Integer, Member> members = new TreeMap<>();
    /** Members killed and wiped by a replacement whose removal has not happened yet. */
    private final Set<Integer> dead = new HashSet<>();
    private final Set<Long> usedIds = new HashSet<>();
    private final Set<Integer> usedIndexes = new HashSet<>();

    /**
     * A plan starting from these voters.
     *
     * @param voters process index → member id of each initial voter
     */
    public MembershipPlan(Map<Integer, Long> voters) {
        voters.forEach((index, id) -> {
            record(index, id);
            members.put(index, new Member(index, id, true));
        });
        if (voters() < MIN_VOTERS || voters() > MAX_VOTERS) {
            throw new IllegalArgumentException("start with " + MIN_VOTERS + ".." + MAX_VOTERS + " voters: " + voters);
        }
    }

    /**
     * Chooses the next step: grow while below {@link #MAX_VOTERS}, shrink while above {@link #MIN_VOTERS},
     * replace always; a removed or replaced voter is the leader half the time (when the leader is known). A
     * learner left over from a step whose promotion failed is removed first; then a dead member still in the
     * configuration: it is removed if the voters allow, else a member is added so that they will.
     *
     * @param random the run's randomness
     * @param leader the leader's process index, or -1 if unknown
     * @return the step
     */
    public Step next(Random random, int leader) {
        for (Member m : members.values()) {
            if (!m.voter()) {
                // A learner left over (its promotion and then its removal were refused): remove it first.
                return new Step(Kind.SHRINK, m.index(), false);
            }
        }
        if (!dead.isEmpty()) {
            // A replacement left a dead member in the configuration (its removal was refused or would have
            // left too few voters): finish it before
            // anything else but a left-over learner, so no second member is ever lost.
            int target = dead.iterator().next();
            return voters() > MIN_VOTERS ? new Step(Kind.SHRINK, target, false) : new Step(Kind.GROW, -1, false);
        }
        List<Kind> allowed = new ArrayList<>();
        if (canAdd()) {
            allowed.add(Kind.GROW);
        }
        if (voters() > MIN_VOTERS) {
            allowed.add(Kind.SHRINK);
        }
        allowed.add(Kind.REPLACE);
        Kind kind = allowed.get(random.nextInt(allowed.size()));
        if (kind == Kind.GROW) {
            return new Step(kind, -1, false);
        }
        List<Integer> voters = members.values().stream().filter(Member::voter).map(Member::index).toList();
        boolean leaderIsVoter = voters.contains(leader);
        int target = leaderIsVoter && random.nextBoolean() ? leader : voters.get(random.nextInt(voters.size()));
        return new Step(kind, target, target == leader);
    }

    /**
     * The operations of a step, in order. A replacement removes the dead member first unless the cluster is at
     * {@link #MIN_VOTERS}; then it adds and promotes the newcomer first (one more voter, one of them dead: a
     * majority is still up), so the voters never drop below the minimum.
     *
     * @param step the step
     * @return its operations
     */
    public List<Op> operations(Step step) {
        switch (step.kind()) {
            case GROW:
                return List.of(Op.ADD_LEARNER, Op.PROMOTE);
            case SHRINK:
                return List.of(Op.REMOVE);
            default:
                return voters() <= MIN_VOTERS
                        ? List.of(Op.KILL_AND_WIPE, Op.ADD_LEARNER, Op.PROMOTE, Op.REMOVE)
                        : List.of(Op.KILL_AND_WIPE, Op.REMOVE, Op.ADD_LEARNER, Op.PROMOTE);
        }
    }

    /**
     * Whether a member may be added now: fewer than {@link #MAX_VOTERS} voters and no learner yet (one
     * newcomer at a time).
     *
     * @return true if so
     */
    public boolean canAdd() {
        return voters() < MAX_VOTERS && members.size() < MAX_MEMBERS
                && members.values().stream().allMatch(Member::voter);
    }

    /**
     * Whether member {@code index} may be removed now: a learner always, a voter only above
     * {@link #MIN_VOTERS}.
     *
     * @param index a member's process index
     * @return true if so
     */
    public boolean canRemove(int index) {
        return !member(index).voter() || voters() > MIN_VOTERS;
    }

    /**
     * A member was killed and its data dir deleted (the first operation of a replacement).
     *
     * @param index its process index
     */
    public void killed(int index) {
        member(index);
        dead.add(index);
    }

    /**
     * Whether member {@code index} was killed and wiped and is still in the configuration.
     *
     * @param index a process index
     * @return true if so
     */
    public boolean isDead(int index) {
        return dead.contains(index);
    }

    /**
     * A new member was added as a learner.
     *
     * @param index its process index
     * @param id    the id the cluster assigned
     * @throws IllegalStateException if the id or the index was used before (ids are unique forever)
     */
    public void added(int index, long id) {
        record(index, id);
        members.put(index, new Member(index, id, false));
    }

    /**
     * Whether this process index was ever used (an index is a name, {@code n(index+1)}, and a data dir).
     *
     * @param index a process index
     * @return true if used
     */
    public boolean indexUsed(int index) {
        return usedIndexes.contains(index);
    }

    /**
     * A learner was promoted to voter.
     *
     * @param index its process index
     */
    public void promoted(int index) {
        Member m = member(index);
        members.put(index, new Member(index, m.id(), true));
    }

    /**
     * A member left the configuration.
     *
     * @param index its process index
     */
    public void removed(int index) {
        member(index);
        members.remove(index);
        dead.remove(index);
    }

    /**
     * The member at this index.
     *
     * @param index a process index
     * @return the member
     * @throws IllegalArgumentException if it is not a member
     */
    public Member member(int index) {
        Member m = members.get(index);
        if (m == null) {
            throw new IllegalArgumentException("n" + (index + 1) + " is not a member");
        }
        return m;
    }

    /**
     * Whether this index is a member now.
     *
     * @param index a process index
     * @return true if it is in the configuration
     */
    public boolean isMember(int index) {
        return members.containsKey(index);
    }

    /**
     * The members now, by process index.
     *
     * @return the members
     */
    public List<Member> members() {
        return List.copyOf(members.values());
    }

    /**
     * The number of voters now.
     *
     * @return the voters
     */
    public int voters() {
        return (int) members.values().stream().filter(Member::voter).count();
    }

    /**
     * Every member id the plan has seen, removed ones included.
     *
     * @return the ids
     */
    public Set<Long> usedIds() {
        return Set.copyOf(usedIds);
    }

    private void record(int index, long id) {
        if (usedIds.contains(id)) {
            throw new IllegalStateException("member id " + id + " was used before: ids must never be reused");
        }
        if (usedIndexes.contains(index)) {
            throw new IllegalStateException("process n" + (index + 1) + " was used before");
        }
        usedIds.add(id);
        usedIndexes.add(index);
    }
}
