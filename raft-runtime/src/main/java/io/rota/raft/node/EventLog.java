package io.rota.raft.node;

import io.rota.raft.core.RaftEvent;
import io.rota.raft.core.RaftEvent.BecameFollower;
import io.rota.raft.core.RaftEvent.BecameLeader;
import io.rota.raft.core.RaftEvent.ElectionLost;
import io.rota.raft.core.RaftEvent.ElectionStarted;
import io.rota.raft.core.RaftEvent.LeaderChanged;
import io.rota.raft.core.RaftEvent.ProposalsRefused;
import io.rota.raft.core.RaftEvent.SnapshotInstalled;
import io.rota.raft.core.RaftEvent.SteppedDown;
import io.rota.raft.core.RaftEvent.TransferAborted;
import io.rota.raft.core.RaftEvent.TransferStarted;
import io.rota.raft.core.RaftEvent.VoteDenied;
import io.rota.raft.core.RaftEvent.VoteGranted;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;
import org.slf4j.Logger;
import org.slf4j.event.Level;

import java.util.Locale;

/**
 * The core's {@link RaftEvent}s as log lines, one per event, in one format — "node 2: became leader at term 7
 * after 1 pre-vote round" — so that an operator can follow what a member did (design decision H9).
 *
 * <p>Levels: INFO for role, leader and term changes; DEBUG for each vote; WARN for what needs a look: a
 * leader that lost its quorum, a leadership transfer that did not finish, proposals refused for the
 * uncommitted-bytes limit.
 */
final class EventLog {

    /** One line: its level and its text. */
    record Line(Level level, String text) {
    }

    private EventLog() {
    }

    /** Writes {@code event} of node {@code node} to {@code log}. */
    static void write(Logger log, long node, RaftEvent event) {
        Line line = line(node, event);
        if (log.isEnabledForLevel(line.level())) {
            log.atLevel(line.level()).log(line.text());
        }
    }

    /** The line for {@code event} of node {@code node}. */
    static Line line(long node, RaftEvent event) {
        return event.accept(new Describe("node " + node + ": "));
    }

    /** One case per event type: a new event does not compile until it has a line. */
    private static final class Describe implements RaftEvent.Visitor<Line> {

        private final String prefix;

        Describe(String prefix) {
            this.prefix = prefix;
        }

        private Line info(String text) {
            return new Line(Level.INFO, prefix + text);
        }

        @Override
        public Line visit(ElectionStarted e) {
            String why = switch (e.cause()) {
                case ELECTION_TIMEOUT -> "no word from a leader within the election timeout";
                case LEADER_DOWN -> "the leader's process is gone";
                case PRE_VOTE_WON -> "a majority granted the pre-vote";
                case LEADERSHIP_TRANSFER -> "the leader is handing leadership over";
            };
            return info("started " + (e.preVote() ? "a pre-vote" : "an election") + " for term " + e.term()
                    + " (" + why + ")");
        }

        @Override
        public Line visit(VoteGranted e) {
            return new Line(Level.DEBUG, prefix + "granted " + vote(e.preVote()) + " to node " + e.candidate()
                    + " for term " + e.term());
        }

        @Override
        public Line visit(VoteDenied e) {
            return new Line(Level.DEBUG, prefix + "refused " + vote(e.preVote()) + " to node " + e.candidate()
                    + " for term " + e.term() + ": " + e.reason().description());
        }

        @Override
        public Line visit(ElectionLost e) {
            return info("lost the " + (e.preVote() ? "pre-vote" : "election") + " for term " + e.term() + " with "
                    + e.votesGranted() + " of " + e.voters() + " votes; waiting for a leader or the next timeout");
        }

        @Override
        public Line visit(BecameLeader e) {
            String rounds = e.preVoteRounds() == 0 ? ""
                    : " after " + e.preVoteRounds() + " pre-vote round" + (e.preVoteRounds() == 1 ? "" : "s");
            return info("became leader at term " + e.term() + rounds);
        }

        @Override
        public Line visit(BecameFollower e) {
            return info("became follower at term " + e.term() + " (was " + role(e.previousRole()) + "); "
                    + leader(e.leader()));
        }

        @Override
        public Line visit(SteppedDown e) {
            return switch (e.cause()) {
                case QUORUM_LOST -> new Line(Level.WARN, prefix + "stepped down as leader at term " + e.term()
                        + ": no word from a quorum within an election timeout (CheckQuorum)");
                case HIGHER_TERM -> info("stepped down as leader: node " + e.peer() + " is at term " + e.term());
                case TRANSFER_COMPLETED -> info("stepped down as leader at term " + e.term()
                        + ": leadership transferred to node " + e.peer());
                case REMOVED_FROM_CONFIGURATION -> info("stepped down as leader at term " + e.term()
                        + ": the committed configuration no longer has it as a voter (§4.2.2)"
                        + (e.peer() == RaftNode.NONE ? "" : "; handed over to node " + e.peer()));
            };
        }

        @Override
        public Line visit(LeaderChanged e) {
            String was = e.previousLeader() == RaftNode.NONE ? "" : " (was node " + e.previousLeader() + ")";
            return info(leader(e.leader()) + " at term " + e.term() + was);
        }

        @Override
        public Line visit(TransferStarted e) {
            return info("transferring leadership to node " + e.target() + " at term " + e.term());
        }

        @Override
        public Line visit(TransferAborted e) {
            return new Line(Level.WARN, prefix + "abandoned the leadership transfer to node " + e.target()
                    + " at term " + e.term() + ": not done within an election timeout");
        }

        @Override
        public Line visit(SnapshotInstalled e) {
            // DEBUG: the driver logs the restore itself at INFO when it applies the snapshot.
            return new Line(Level.DEBUG, prefix + "replaced its log up to index " + e.index()
                    + " by a snapshot from leader node " + e.from() + " at term " + e.term());
        }

        @Override
        public Line visit(ProposalsRefused e) {
            return new Line(Level.WARN, prefix + "refusing proposals at term " + e.term() + ": " + e.uncommittedBytes()
                    + " uncommitted bytes reached the limit of " + e.limit() + "; followers are slow or unreachable");
        }

        private static String vote(boolean preVote) {
            return preVote ? "a pre-vote" : "its vote";
        }

        private static String leader(long leader) {
            return leader == RaftNode.NONE ? "no leader known" : "leader is node " + leader;
        }

        private static String role(Role role) {
            return role.name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }
}
