package io.rota.raft.core;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongUnaryOperator;

/**
 * The cluster membership: which servers vote (§4). A value object, so that single-server membership
 * changes (§4.1) can later replace one configuration by another without touching the rest of the core.
 *
 * <p>Quorum arithmetic lives here too: a majority of the voters decides elections (§5.2) and commitment
 * (§5.3).
 */
public record Configuration(Set<Long> voters) {

    public Configuration {
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("a configuration needs at least one voter");
        }
        for (long id : voters) {
            if (id == RaftNode.NONE) {
                throw new IllegalArgumentException("node id " + RaftNode.NONE + " is reserved for 'none'");
            }
        }
        voters = Collections.unmodifiableSet(new TreeSet<>(voters));
    }

    public static Configuration of(Long... voters) {
        return new Configuration(Set.of(voters));
    }

    public boolean contains(long id) {
        return voters.contains(id);
    }

    public int size() {
        return voters.size();
    }

    /** Smallest number of voters that forms a majority. */
    public int quorum() {
        return voters.size() / 2 + 1;
    }

    /**
     * The highest index replicated on a majority: sort the voters' match indexes descending and take
     * the quorum-th (§5.3; the leader still applies the current-term rule of §5.4.2 on top).
     */
    public long committedIndex(LongUnaryOperator matchIndexOf) {
        long[] matches = new long[voters.size()];
        int i = 0;
        for (long id : voters) {
            matches[i++] = matchIndexOf.applyAsLong(id);
        }
        java.util.Arrays.sort(matches);
        return matches[matches.length - quorum()];
    }

    /** Outcome of an election so far, given the votes received (absent = not heard from). */
    public VoteResult voteResult(Map<Long, Boolean> votes) {
        int granted = 0;
        int rejected = 0;
        for (long id : voters) {
            Boolean v = votes.get(id);
            if (v == null) {
                continue;
            }
            if (v) {
                granted++;
            } else {
                rejected++;
            }
        }
        if (granted >= quorum()) {
            return VoteResult.WON;
        }
        if (rejected >= quorum() || granted + (voters.size() - granted - rejected) < quorum()) {
            return VoteResult.LOST;
        }
        return VoteResult.PENDING;
    }

    /** Result of {@link #voteResult}. */
    public enum VoteResult { WON, LOST, PENDING }
}
