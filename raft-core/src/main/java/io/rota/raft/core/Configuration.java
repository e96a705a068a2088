package io.rota.raft.core;

import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongUnaryOperator;

/**
 * The cluster membership (§4): the <b>voters</b>, a majority of whom decides elections (§5.2) and
 * commitment (§5.3), and the <b>learners</b> (non-voting members, §4.2.1), which receive the log and
 * snapshots but never campaign and never count toward any majority. A value object: a membership change
 * (§4.1) replaces one configuration by another, through a {@link Entry.Type#CONFIGURATION} log entry.
 *
 * <p>Quorum arithmetic lives here, and it only ever looks at the voters.
 *
 * @param voters   the servers whose votes and acknowledgements count; never empty
 * @param learners servers that replicate the log without a vote; disjoint from {@code voters}
 */
public record Configuration(Set<Long> voters, Set<Long> learners) {

    /** First byte of an encoded configuration: lets a later format be told apart. */
    private static final byte FORMAT = 1;
    /** Bound on the members of a decoded configuration, so damaged bytes cannot make us allocate wildly. */
    private static final int MAX_MEMBERS = 1024;

    public Configuration {
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("a configuration needs at least one voter");
        }
        for (long id : voters) {
            requireId(id);
            if (learners.contains(id)) {
                throw new IllegalArgumentException("node " + id + " cannot be both a voter and a learner");
            }
        }
        for (long id : learners) {
            requireId(id);
        }
        voters = Collections.unmodifiableSet(new TreeSet<>(voters));
        learners = Collections.unmodifiableSet(new TreeSet<>(learners));
    }

    /** Voters only, no learners (a cluster as it is bootstrapped). */
    public Configuration(Set<Long> voters) {
        this(voters, Set.of());
    }

    private static void requireId(long id) {
        if (id == RaftNode.NONE) {
            throw new IllegalArgumentException("node id " + RaftNode.NONE + " is reserved for 'none'");
        }
    }

    public static Configuration of(Long... voters) {
        return new Configuration(Set.of(voters));
    }

    /** Whether {@code id} votes: it may campaign, and its votes and acknowledgements count. */
    public boolean isVoter(long id) {
        return voters.contains(id);
    }

    public boolean isLearner(long id) {
        return learners.contains(id);
    }

    /** Voter or learner: a server the leader replicates to. */
    public boolean isMember(long id) {
        return voters.contains(id) || learners.contains(id);
    }

    /** Voters and learners, in id order. */
    public Set<Long> members() {
        Set<Long> all = new TreeSet<>(voters);
        all.addAll(learners);
        return Collections.unmodifiableSet(all);
    }

    /** Smallest number of voters that forms a majority. */
    public int quorum() {
        return quorumOf(voters.size());
    }

    /** Smallest number of {@code voters} voters that forms a majority (§5.2). */
    public static int quorumOf(int voters) {
        return voters / 2 + 1;
    }

    /**
     * The highest index replicated on a majority of the voters: sort the voters' match indexes descending
     * and take the quorum-th (§5.3; the leader still applies the current-term rule of §5.4.2 on top).
     * Learners are not asked.
     */
    public long committedIndex(LongUnaryOperator matchIndexOf) {
        long[] matches = new long[voters.size()];
        int i = 0;
        for (long id : voters) {
            matches[i++] = matchIndexOf.applyAsLong(id);
        }
        Arrays.sort(matches);
        return matches[matches.length - quorum()];
    }

    /**
     * Outcome of an election so far, given the votes received (absent = not heard from). Only voters'
     * answers are counted; an answer from anyone else (a learner, a removed server) is ignored.
     */
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

    /**
     * The bytes of a {@link Entry.Type#CONFIGURATION} entry: {@code format (1) | voter count (4) | voters
     * (8 each) | learner count (4) | learners (8 each)}, big-endian. Written by hand because the core uses
     * nothing beyond java.lang and java.util; the storage and transport layers carry the bytes unread.
     */
    public byte[] encode() {
        byte[] out = new byte[1 + 4 + 8 * voters.size() + 4 + 8 * learners.size()];
        out[0] = FORMAT;
        int at = putIds(out, 1, voters);
        putIds(out, at, learners);
        return out;
    }

    /** The configuration {@link #encode()} wrote; {@link IllegalArgumentException} if the bytes are not one. */
    public static Configuration decode(byte[] data) {
        if (data.length < 1 + 4 + 4 || data[0] != FORMAT) {
            throw new IllegalArgumentException("not an encoded configuration (" + data.length + " bytes)");
        }
        int[] at = {1};
        Set<Long> voters = getIds(data, at);
        Set<Long> learners = getIds(data, at);
        if (at[0] != data.length) {
            throw new IllegalArgumentException("encoded configuration has " + (data.length - at[0])
                    + " bytes too many");
        }
        return new Configuration(voters, learners);
    }

    private static int putIds(byte[] out, int at, Set<Long> ids) {
        at = putBigEndian(out, at, ids.size(), 4);
        for (long id : ids) {
            at = putBigEndian(out, at, id, 8);
        }
        return at;
    }

    private static Set<Long> getIds(byte[] data, int[] at) {
        long count = getBigEndian(data, at, 4);
        if (count < 0 || count > MAX_MEMBERS || data.length - at[0] < 8 * count) {
            throw new IllegalArgumentException("encoded configuration has an invalid member count " + count);
        }
        Set<Long> ids = new TreeSet<>();
        for (long k = 0; k < count; k++) {
            ids.add(getBigEndian(data, at, 8));
        }
        return ids;
    }

    private static int putBigEndian(byte[] out, int at, long value, int bytes) {
        for (int k = bytes - 1; k >= 0; k--) {
            out[at++] = (byte) (value >>> (8 * k));
        }
        return at;
    }

    private static long getBigEndian(byte[] data, int[] at, int bytes) {
        if (data.length - at[0] < bytes) {
            throw new IllegalArgumentException("encoded configuration is truncated");
        }
        long value = 0;
        for (int k = 0; k < bytes; k++) {
            value = (value << 8) | (data[at[0]++] & 0xFF);
        }
        return bytes == 4 ? (int) value : value;
    }

    @Override
    public String toString() {
        return "{voters=" + voters + (learners.isEmpty() ? "" : ", learners=" + learners) + "}";
    }
}
