package io.rota.raft.node;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
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
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The driver's log lines for the core's events (design decision H9). */
class EventLogTest {

    @TempDir
    Path dir;

    /** One sample of every event type; a new type without one fails {@link #everyEventTypeHasALine}. */
    private static final List<RaftEvent> SAMPLES = List.of(
            new ElectionStarted(8, true, ElectionStarted.Cause.ELECTION_TIMEOUT),
            new VoteGranted(8, 3, false),
            new VoteDenied(8, 3, true, VoteDenied.Reason.LOG_NOT_UP_TO_DATE),
            new ElectionLost(8, true, 1, 3),
            new BecameLeader(7, 1),
            new BecameFollower(8, 1, Role.CANDIDATE),
            new SteppedDown(7, SteppedDown.Cause.QUORUM_LOST, RaftNode.NONE),
            new LeaderChanged(8, RaftNode.NONE, 1),
            new TransferStarted(7, 3),
            new TransferAborted(7, 3),
            new SnapshotInstalled(7, 1, 1200),
            new ProposalsRefused(7, 64L << 20, 64L << 20));

    @Test
    @DisplayName("Every event type has a line that names the node first")
    void everyEventTypeHasALine() {
        Map<Class<?>, RaftEvent> byType = new LinkedHashMap<>();
        SAMPLES.forEach(e -> byType.put(e.getClass(), e));
        assertEquals(Set.of(RaftEvent.class.getPermittedSubclasses()), byType.keySet(),
                "every RaftEvent type needs a sample here");

        for (RaftEvent e : SAMPLES) {
            EventLog.Line line = EventLog.line(2, e);
            assertTrue(line.text().startsWith("node 2: ") && line.text().length() > 20, line.toString());
        }
    }

    @Test
    @DisplayName("Role and leader changes at INFO, votes at DEBUG, a leader that lost its quorum at WARN")
    void levelsAndFormat() {
        assertEquals(new EventLog.Line(Level.INFO, "node 2: became leader at term 7 after 1 pre-vote round"),
                EventLog.line(2, new BecameLeader(7, 1)));
        assertEquals(Level.INFO, EventLog.line(2, new LeaderChanged(8, 3, 1)).level());
        assertEquals(Level.DEBUG, EventLog.line(2, new VoteGranted(8, 3, false)).level());
        assertEquals(Level.DEBUG, EventLog.line(2, new VoteDenied(8, 3, false, VoteDenied.Reason.STALE_TERM)).level());
        assertEquals(Level.WARN, EventLog.line(2, new SteppedDown(7, SteppedDown.Cause.QUORUM_LOST, 0)).level());
        assertEquals(Level.INFO, EventLog.line(2, new SteppedDown(8, SteppedDown.Cause.HIGHER_TERM, 3)).level());
    }

    @Test
    @DisplayName("A real 3-node cluster: the elected member's driver says so, with its term")
    void electedDriverLogsItsElection() {
        Logger driverLog = (Logger) LoggerFactory.getLogger(RaftDriver.class);
        ch.qos.logback.classic.Level before = driverLog.getLevel();
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        driverLog.addAppender(lines);
        driverLog.setLevel(ch.qos.logback.classic.Level.INFO);
        try (LocalCluster c = new LocalCluster(dir, 3, cfg -> cfg)) {
            long leader = c.awaitLeader();
            long term = c.status(leader).term();

            String expected = "node " + leader + ": became leader at term " + term;
            Await.until(Duration.ofSeconds(10), () -> messages(lines).stream().anyMatch(l -> l.startsWith(expected)),
                    "a line starting with '" + expected + "'");
        } finally {
            driverLog.setLevel(before);
            driverLog.detachAppender(lines);
        }
    }

    private static List<String> messages(ListAppender<ILoggingEvent> appender) {
        synchronized (appender) {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }
}
