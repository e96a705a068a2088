package io.rota.raft.core;

import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One single-server membership change (§4.1): add or remove one server, or turn one learner into a voter.
 * Changes are made one at a time because any majority of the old voters and any majority of the new ones
 * then share a server, so the two configurations can never elect two leaders in one term. Replacing a
 * server is two changes: add the new one, then remove the old one.
 *
 * <p>The recommended way to add a voter is {@link #addLearner} first, let it catch up, then
 * {@link #promote} (§4.2.1): a voter added with an empty log counts toward the quorum at once, so a
 * three-voter cluster that adds a fourth needs three of four acknowledgements while the newcomer is still
 * copying the log, and one more failure stops commitment. {@link #addVoter} is allowed anyway (etcd allows
 * it too) for clusters whose log is short or whose operator accepts that window.
 *
 * @param type what the change does
 * @param node the server it applies to
 */
public record ConfChange(Type type, long node) {

    /**
     * How far behind the leader's last index a learner may be and still be promoted: a learner is <b>caught
     * up</b> when the leader has heard from it in its term ({@code matchIndex > 0}) and
     * {@code lastIndex - matchIndex <= PROMOTION_MAX_LAG_ENTRIES}. 1,000 entries is the number of entries
     * a leader keeps behind a snapshot for slightly slow followers ({@link RaftOptions#DEFAULT_SNAPSHOT_CATCH_UP_ENTRIES}),
     * and a few tens of milliseconds of writes at the peak rate measured on the reference machine — a
     * promoted learner that close acknowledges new entries within a round or two. etcd refuses the same
     * way, with a threshold of 90% of the leader's match index.
     */
    public static final long PROMOTION_MAX_LAG_ENTRIES = 1_000;

    /** What a change does. */
    public enum Type {
        /** A new server joins as a learner (§4.2.1): it receives the log, but has no vote. */
        ADD_LEARNER,
        /** A new server joins as a voter at once (see the class comment for the cost). */
        ADD_VOTER,
        /** A caught-up learner becomes a voter. */
        PROMOTE,
        /** A voter or learner leaves; the leader itself may be removed (§4.2.2). */
        REMOVE
    }

    public ConfChange {
        Objects.requireNonNull(type, "type");
        if (node == RaftNode.NONE) {
            throw new IllegalArgumentException("node id " + RaftNode.NONE + " is reserved for 'none'");
        }
    }

    public static ConfChange addLearner(long node) {
        return new ConfChange(Type.ADD_LEARNER, node);
    }

    public static ConfChange addVoter(long node) {
        return new ConfChange(Type.ADD_VOTER, node);
    }

    public static ConfChange promote(long node) {
        return new ConfChange(Type.PROMOTE, node);
    }

    public static ConfChange remove(long node) {
        return new ConfChange(Type.REMOVE, node);
    }

    /**
     * Why this change does not fit {@code current}, or {@code null} if it does. Only the shape is judged
     * here; the leader adds its own rules (one change at a time, a learner must be caught up).
     */
    ConfChangeResult.Reason misfit(Configuration current) {
        return switch (type) {
            case ADD_LEARNER, ADD_VOTER -> current.isMember(node) ? ConfChangeResult.Reason.ALREADY_MEMBER : null;
            case PROMOTE -> current.isLearner(node) ? null : ConfChangeResult.Reason.NOT_A_LEARNER;
            case REMOVE -> !current.isMember(node) ? ConfChangeResult.Reason.NOT_A_MEMBER
                    : current.voters().equals(Set.of(node)) ? ConfChangeResult.Reason.LAST_VOTER : null;
        };
    }

    /** The configuration after this change; {@link IllegalArgumentException} if it does not fit. */
    public Configuration applyTo(Configuration current) {
        ConfChangeResult.Reason misfit = misfit(current);
        if (misfit != null) {
            throw new IllegalArgumentException(this + " does not fit " + current + ": " + misfit);
        }
        Set<Long> voters = new TreeSet<>(current.voters());
        Set<Long> learners = new TreeSet<>(current.learners());
        switch (type) {
            case ADD_LEARNER -> learners.add(node);
            case ADD_VOTER -> voters.add(node);
            case PROMOTE -> {
                learners.remove(node);
                voters.add(node);
            }
            case REMOVE -> {
                voters.remove(node);
                learners.remove(node);
            }
        }
        return new Configuration(voters, learners);
    }
}
