package io.rota.raft.sim;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.Message;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.ReadState;
import io.rota.raft.core.Role;
import io.rota.raft.core.Snapshot;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The safety properties of Raft (§5.2, Figure 3), checked after every step of a simulated run, plus the
 * runtime properties a Ready must keep. Any failure throws {@link InvariantViolation}.
 *
 * <ul>
 *   <li><b>Election Safety</b>: at most one leader per term.</li>
 *   <li><b>Leader Append-Only</b>: a leader never overwrites or deletes entries in its log.</li>
 *   <li><b>Log Matching</b>: two logs with an entry of the same index and term are identical up to it.
 *       Checked across all logs ever seen, by a hash of each entry's prefix keyed by (index, term).</li>
 *   <li><b>Leader Completeness</b>: an entry committed in term T is in the log of every leader of a term
 *       after T.</li>
 *   <li><b>State Machine Safety</b>: no two servers apply different entries at one index; snapshots
 *       carry exactly the state of the entries they replace.</li>
 *   <li>Monotonicity: commit and applied indexes never decrease (per incarnation in memory; across
 *       restarts on disk); the persisted term never decreases; one vote per term survives crashes.</li>
 *   <li>Linearizable reads (§6.4): a released read index covers everything committed before the read
 *       was issued.</li>
 * </ul>
 * Membership changes (thesis chapter 4) add:
 * <ul>
 *   <li><b>Configuration at append</b> (§4.1): every server uses the latest configuration in its log,
 *       committed or not — so a truncated configuration entry takes its configuration with it. Computed
 *       here from the log itself, independently of the core's bookkeeping.</li>
 *   <li><b>One change at a time</b> (§4.1): a leader's log never holds two uncommitted configuration
 *       entries.</li>
 *   <li><b>Commitment quorum</b> (§4.1, §5.3): when a leader moves its commit index, the new committed
 *       entry is held by a majority of the voters of the leader's configuration — by its matchIndex, and
 *       in the logs of those voters that are running. Learners and removed servers do not count.</li>
 *   <li><b>Election quorum</b> (§4.2.1, §5.2): every leader was elected by granted votes, delivered to it,
 *       from a majority of the voters of its configuration — no vote from a learner or a non-member
 *       counts. Election Safety (one leader per term) is checked across all servers whatever their
 *       configurations.</li>
 * </ul>
 */
final class InvariantChecker {

    private record IndexTerm(long index, long term) {
    }

    private record CandidateTerm(long candidate, long term) {
    }

    /** The configuration every server starts with (index 0). */
    private final Configuration bootstrap;
    /** Election quorum: the granted votes delivered to each candidate in each term. */
    private final Map<CandidateTerm, Set<Long>> grantedVotes = new HashMap<>();
    private long configurationsCommitted;

    /** Election Safety: the leader seen for each term. */
    private final Map<Long, Long> leaderOfTerm = new HashMap<>();
    /** Log Matching: hash of the log prefix ending in (index, term), as first seen in any log. */
    private final Map<IndexTerm, Long> prefixHash = new HashMap<>();
    /** Committed entries, as recorded from the leader that committed them (index 0 unused). */
    private final List<Long> committedEntryTerm = new ArrayList<>(List.of(0L));
    private final List<Long> committedInTerm = new ArrayList<>(List.of(0L));
    /** State Machine Safety: the entry applied at each index, and the state hash after it. */
    private final Map<Long, Entry> applied = new HashMap<>();
    private final Map<Long, Long> stateHashAt = new HashMap<>();

    private final NodeTrack[] tracks;

    /** What the checker remembers about one node. */
    private static final class NodeTrack {
        // Shadow of the node's log with prefix hashes, to check Log Matching incrementally.
        long shadowFirst = 1;
        final ArrayList<Entry> shadow = new ArrayList<>();
        final ArrayList<Long> shadowHash = new ArrayList<>();
        /** The configuration entries in the shadow, by index (§4.1). */
        final TreeMap<Long, Configuration> shadowConfigs = new TreeMap<>();
        // Leader Append-Only.
        long leaderTerm = -1;
        long leaderLastIndex;
        // Monotonicity within one incarnation.
        int incarnation = -1;
        long commitIndex;
        long appliedIndex;
        long term;
        // Monotonicity on disk, across incarnations.
        HardState persisted = HardState.EMPTY;
        final Map<Long, Long> voteInTerm = new HashMap<>();
    }

    InvariantChecker(int nodes, Configuration bootstrap) {
        this.bootstrap = bootstrap;
        tracks = new NodeTrack[nodes];
        for (int i = 0; i < nodes; i++) {
            tracks[i] = new NodeTrack();
        }
    }

    long maxCommitted() {
        return committedEntryTerm.size() - 1;
    }

    /** Configuration entries committed so far: membership changes done. */
    long configurationsCommitted() {
        return configurationsCommitted;
    }

    /** After every step: the properties over the live nodes' in-memory state. */
    void afterStep(RaftNode[] nodes, int[] incarnations) {
        for (int i = 0; i < nodes.length; i++) {
            RaftNode r = nodes[i];
            if (r == null) {
                continue;
            }
            NodeTrack t = tracks[i];
            if (t.incarnation != incarnations[i]) {
                t.incarnation = incarnations[i];
                t.commitIndex = 0;
                t.appliedIndex = 0;
                t.term = 0;
                t.leaderTerm = -1;
            }
            long commitBefore = t.commitIndex;
            monotonic(r, t);
            long changedFrom = updateShadow(r, t);
            Configuration configuration = configurationAtAppend(r, t);
            if (r.role() == Role.LEADER) {
                Long other = leaderOfTerm.putIfAbsent(r.currentTerm(), r.id());
                if (other != null && other != r.id()) {
                    throw new InvariantViolation("Election Safety: nodes " + other + " and " + r.id()
                            + " are both leaders of term " + r.currentTerm());
                }
                if (other == null) {
                    electionQuorum(r, configuration);
                }
                oneChangeAtATime(r, t);
                if (r.commitIndex() > commitBefore) {
                    commitmentQuorum(r, configuration, nodes);
                }
                if (t.leaderTerm == r.currentTerm() && changedFrom <= t.leaderLastIndex) {
                    throw new InvariantViolation("Leader Append-Only: leader " + r.id() + " of term "
                            + r.currentTerm() + " changed its log at index " + changedFrom
                            + " (its last index was " + t.leaderLastIndex + ")");
                }
                t.leaderTerm = r.currentTerm();
                t.leaderLastIndex = r.lastIndex();
                recordCommits(r);
            } else {
                t.leaderTerm = -1;
            }
        }
        for (RaftNode r : nodes) {
            if (r != null) {
                if (r.commitIndex() > maxCommitted()) {
                    throw new InvariantViolation("node " + r.id() + " has commit index " + r.commitIndex()
                            + " but no leader ever committed beyond " + maxCommitted());
                }
                if (r.role() == Role.LEADER) {
                    leaderCompleteness(r);
                }
            }
        }
    }

    private void monotonic(RaftNode r, NodeTrack t) {
        if (r.commitIndex() < t.commitIndex || r.appliedIndex() < t.appliedIndex || r.currentTerm() < t.term) {
            throw new InvariantViolation("node " + r.id() + " went back: commit " + t.commitIndex + "->"
                    + r.commitIndex() + ", applied " + t.appliedIndex + "->" + r.appliedIndex() + ", term "
                    + t.term + "->" + r.currentTerm());
        }
        if (r.appliedIndex() > r.commitIndex()) {
            throw new InvariantViolation("node " + r.id() + " applied " + r.appliedIndex()
                    + " beyond its commit index " + r.commitIndex());
        }
        t.commitIndex = r.commitIndex();
        t.appliedIndex = r.appliedIndex();
        t.term = r.currentTerm();
    }

    /**
     * Bring the node's shadow log up to date and check Log Matching on every entry that changed.
     * Returns the first index whose entry changed (or Long.MAX_VALUE).
     */
    private long updateShadow(RaftNode r, NodeTrack t) {
        List<Entry> log = r.logEntries();
        long first = r.firstIndex();
        // Drop what the node compacted.
        if (first > t.shadowFirst) {
            int drop = (int) Math.min(first - t.shadowFirst, t.shadow.size());
            t.shadow.subList(0, drop).clear();
            t.shadowHash.subList(0, drop).clear();
            t.shadowFirst = first;
        }
        if (first != t.shadowFirst) {
            // Restored from a snapshot or restarted: start over.
            t.shadow.clear();
            t.shadowHash.clear();
            t.shadowFirst = first;
        }
        t.shadowConfigs.headMap(first).clear();
        int k = 0;
        while (k < log.size() && k < t.shadow.size() && t.shadow.get(k) == log.get(k)) {
            k++;
        }
        long changedFrom = k < Math.max(log.size(), t.shadow.size()) ? first + k : Long.MAX_VALUE;
        t.shadow.subList(k, t.shadow.size()).clear();
        t.shadowHash.subList(k, t.shadowHash.size()).clear();
        t.shadowConfigs.tailMap(first + k).clear();
        long hash = k > 0 ? t.shadowHash.get(k - 1) : baseHash(r, first - 1);
        for (int j = k; j < log.size(); j++) {
            Entry e = log.get(j);
            hash = SimStateMachine.fold(hash, e);
            Long seen = prefixHash.putIfAbsent(new IndexTerm(e.index(), e.term()), hash);
            if (seen != null && seen != hash) {
                throw new InvariantViolation("Log Matching: node " + r.id() + " holds entry " + e.index()
                        + " of term " + e.term() + " with a different log before it than another node had");
            }
            t.shadow.add(e);
            t.shadowHash.add(hash);
            if (e.type() == Entry.Type.CONFIGURATION) {
                t.shadowConfigs.put(e.index(), Configuration.decode(e.data()));
            }
        }
        return changedFrom;
    }

    /**
     * §4.1: the node's configuration is the latest in its log — the last configuration entry of its log,
     * else its snapshot's, else the bootstrap one. Returns it.
     */
    private Configuration configurationAtAppend(RaftNode r, NodeTrack t) {
        Configuration expected = !t.shadowConfigs.isEmpty() ? t.shadowConfigs.lastEntry().getValue()
                : r.latestSnapshot() != null ? r.latestSnapshot().metadata().configuration() : bootstrap;
        if (!expected.equals(r.configuration())) {
            throw new InvariantViolation("Configuration at append (§4.1): node " + r.id() + " uses "
                    + r.configuration() + " but the latest configuration in its log is " + expected);
        }
        return expected;
    }

    /** §4.1: at most one uncommitted configuration entry in a leader's log. */
    private void oneChangeAtATime(RaftNode leader, NodeTrack t) {
        Map<Long, Configuration> uncommitted = t.shadowConfigs.tailMap(leader.commitIndex(), false);
        if (uncommitted.size() > 1) {
            throw new InvariantViolation("One change at a time (§4.1): leader " + leader.id() + " of term "
                    + leader.currentTerm() + " holds uncommitted configuration entries at " + uncommitted.keySet()
                    + " (commit index " + leader.commitIndex() + ")");
        }
    }

    /**
     * The leader just moved its commit index: the entry there must be held by a majority of the voters of
     * its configuration, by its own matchIndex, and by the logs of those voters that are running (an entry
     * compacted under a snapshot is held).
     */
    private void commitmentQuorum(RaftNode leader, Configuration configuration, RaftNode[] nodes) {
        long c = leader.commitIndex();
        long term = leader.term(c);
        Map<Long, RaftNode.ProgressView> progress = leader.progress();
        List<Long> holders = new ArrayList<>();
        for (long voter : configuration.voters()) {
            RaftNode.ProgressView pv = progress.get(voter);
            if (pv == null || pv.matchIndex() < c) {
                continue;
            }
            RaftNode node = voter <= nodes.length ? nodes[(int) voter - 1] : null;
            if (node != null && term > 0 && node.firstIndex() <= c && node.term(c) != term) {
                throw new InvariantViolation("Commitment quorum: leader " + leader.id() + " counted node " + voter
                        + " as holding entry " + c + "@" + term + ", but its log has term " + node.term(c) + " there");
            }
            holders.add(voter);
        }
        if (holders.size() < configuration.quorum()) {
            throw new InvariantViolation("Commitment quorum (§4.1): leader " + leader.id() + " of term "
                    + leader.currentTerm() + " committed " + c + " held only by voters " + holders + " of "
                    + configuration + "; learners and removed servers do not count");
        }
    }

    /** A granted vote was delivered to its candidate: remember it for the election quorum check. */
    void onVoteDelivered(Message.RequestVoteResponse r) {
        if (r.voteGranted() && !r.preVote()) {
            grantedVotes.computeIfAbsent(new CandidateTerm(r.to(), r.term()), k -> new HashSet<>()).add(r.from());
        }
    }

    /** A new leader was elected by a majority of its configuration's voters, itself included. */
    private void electionQuorum(RaftNode leader, Configuration configuration) {
        Set<Long> votes = new HashSet<>(grantedVotes.getOrDefault(
                new CandidateTerm(leader.id(), leader.currentTerm()), Set.of()));
        votes.add(leader.id());
        votes.retainAll(configuration.voters());
        if (votes.size() < configuration.quorum()) {
            throw new InvariantViolation("Election quorum (§4.2.1): leader " + leader.id() + " of term "
                    + leader.currentTerm() + " holds votes of voters " + votes + " only, not a majority of "
                    + configuration + "; learners and non-members do not vote");
        }
    }

    private long baseHash(RaftNode r, long index) {
        if (index == 0) {
            return 0;
        }
        Long h = prefixHash.get(new IndexTerm(index, r.term(index)));
        if (h == null) {
            throw new InvariantViolation("node " + r.id() + "'s log starts after entry " + index + "@"
                    + r.term(index) + ", which no log ever held");
        }
        return h;
    }

    /**
     * Record what the leaders have committed so far; called before any entry is applied, since a leader
     * commits in {@code advance()} and the same round of Readies may apply the entry.
     */
    void observeCommits(RaftNode[] nodes) {
        for (RaftNode r : nodes) {
            if (r != null && r.role() == Role.LEADER) {
                recordCommits(r);
            }
        }
    }

    /** Record what a leader has committed: index, entry term, and the committing leader's term. */
    private void recordCommits(RaftNode leader) {
        for (long i = maxCommitted() + 1; i <= leader.commitIndex(); i++) {
            long term = leader.term(i);
            if (term <= 0) {
                throw new InvariantViolation("leader " + leader.id() + " committed " + i
                        + " but its log no longer holds it");
            }
            committedEntryTerm.add(term);
            committedInTerm.add(leader.currentTerm());
            if (i >= leader.firstIndex()
                    && leader.logEntries().get((int) (i - leader.firstIndex())).type() == Entry.Type.CONFIGURATION) {
                configurationsCommitted++;
            }
        }
    }

    /** Leader Completeness: a leader holds every entry committed in an earlier term. */
    private void leaderCompleteness(RaftNode leader) {
        long from = Math.max(1, leader.firstIndex() - 1);
        for (long i = from; i <= maxCommitted(); i++) {
            if (committedInTerm.get((int) i) >= leader.currentTerm()) {
                continue;
            }
            long expected = committedEntryTerm.get((int) i);
            long actual = leader.term(i);
            if (actual != expected) {
                throw new InvariantViolation("Leader Completeness: leader " + leader.id() + " of term "
                        + leader.currentTerm() + " has " + (actual < 0 ? "no entry" : "term " + actual)
                        + " at index " + i + ", committed with term " + expected + " in term "
                        + committedInTerm.get((int) i));
            }
        }
    }

    /** A node persisted a hard state: term and commit never go back, a vote is never changed. */
    void onPersist(int node, long id, HardState hs) {
        NodeTrack t = tracks[node];
        if (hs.currentTerm() < t.persisted.currentTerm() || hs.commitIndex() < t.persisted.commitIndex()) {
            throw new InvariantViolation("node " + id + " persisted a hard state that goes back: "
                    + t.persisted + " -> " + hs);
        }
        if (hs.votedFor() != RaftNode.NONE) {
            Long before = t.voteInTerm.putIfAbsent(hs.currentTerm(), hs.votedFor());
            if (before != null && before != hs.votedFor()) {
                throw new InvariantViolation("node " + id + " voted twice in term " + hs.currentTerm() + ": for "
                        + before + " and for " + hs.votedFor());
            }
        }
        t.persisted = hs;
    }

    /** State Machine Safety, at the moment an entry is applied. */
    void onApply(long id, Entry e, long stateHashAfter) {
        if (e.index() > maxCommitted() || committedEntryTerm.get((int) e.index()) != e.term()) {
            throw new InvariantViolation("node " + id + " applied " + e + " which was not committed");
        }
        Entry before = applied.putIfAbsent(e.index(), e);
        if (before != null && (before.term() != e.term() || !Arrays.equals(before.data(), e.data()))) {
            throw new InvariantViolation("State Machine Safety: node " + id + " applied " + e + " at index "
                    + e.index() + " where another node applied " + before);
        }
        Long hash = stateHashAt.putIfAbsent(e.index(), stateHashAfter);
        if (hash != null && hash != stateHashAfter) {
            throw new InvariantViolation("State Machine Safety: node " + id + " reached a different state at "
                    + e.index());
        }
    }

    /** A snapshot must hold exactly the state reached by applying its log prefix. */
    void onRestore(long id, Snapshot s) {
        ByteBuffer b = ByteBuffer.wrap(((io.rota.raft.core.SnapshotBytes) s.data()).bytes());
        long index = b.getLong();
        long hash = b.getLong();
        Long expected = stateHashAt.get(index);
        if (index != s.index() || expected == null || expected != hash) {
            throw new InvariantViolation("node " + id + " restored " + s + " whose state does not match index "
                    + s.index());
        }
    }

    /** §6.4: a read released at {@code readIndex} must cover what was committed when it was issued. */
    void onRead(long id, ReadState rs, long committedWhenIssued) {
        if (rs.readIndex() < committedWhenIssued) {
            throw new InvariantViolation("stale read: node " + id + " released read " + rs.context() + " at index "
                    + rs.readIndex() + " but " + committedWhenIssued + " was committed when it was issued");
        }
    }
}
