package io.rota.raft.core;

import java.util.List;

/**
 * Everything the core wants done, handed out by {@link RaftNode#ready()} and acknowledged by
 * {@link RaftNode#advance(Ready)}. The core itself does no I/O; a Ready is how its effects leave.
 *
 * <h2>The contract (the runtime must obey it in this order)</h2>
 * <ol>
 *   <li>{@link #leaderMessages()} may be sent at once, even before step 2 finishes: a leader's
 *       AppendEntries, heartbeats, snapshots and TimeoutNow promise nothing about its own disk, and
 *       sending them while the leader writes its own copy overlaps the two (§10.2.1). The leader counts
 *       itself toward commitment only after {@code advance}, i.e. once its copy is durable.</li>
 *   <li>Persist, durably (one fsync for all of it): {@link #snapshot()} if present, then
 *       {@link #entries()} — which replace any stored entries from {@code entries().get(0).index()}
 *       on — then {@link #hardState()} if present.</li>
 *   <li>Send {@link #messages()}. Votes and AppendEntries acknowledgements are in this list because
 *       they promise what step 2 made durable (Figure 2: "updated on stable storage before responding
 *       to RPCs").</li>
 *   <li>Restore the state machine from {@link #snapshot()} if present, then apply
 *       {@link #committedEntries()} in order; serve {@link #readStates()} once applied up to their
 *       index.</li>
 *   <li>Call {@link RaftNode#advance(Ready)}. No other call may reach the node between {@code ready()}
 *       and {@code advance()}.</li>
 * </ol>
 *
 * @param softState        role, leader and term after the steps that produced this Ready
 * @param hardState        new persistent state, or {@code null} if unchanged
 * @param snapshot         a snapshot received from the leader to persist and restore, or {@code null}
 * @param entries          log entries to persist (appended or overwriting a conflicting suffix)
 * @param committedEntries entries to apply to the state machine, in index order
 * @param leaderMessages   leader messages that may go out before the persist step (§10.2.1)
 * @param messages         messages that must wait for the persist step
 * @param readStates       reads confirmed by ReadIndex (§6.4)
 * @param mustSync         whether step 2 must fsync before step 3: new entries, a snapshot, or a new
 *                         term or vote. A hard state that only moves the commit index may be written
 *                         without waiting for the disk: commitIndex is volatile state in Figure 2 (a
 *                         node that loses it learns it again from the leader), so nothing is promised
 *                         on it.
 * @param events           what the node did since the last Ready — elections, votes, role and leader
 *                         changes — in order, for the runtime to log ({@link RaftEvent}); not part of the
 *                         contract above, so it may be read at any step
 */
public record Ready(SoftState softState, HardState hardState, Snapshot snapshot, List<Entry> entries,
                   List<Entry> committedEntries, List<Message> leaderMessages, List<Message> messages,
                   List<ReadState> readStates, boolean mustSync, List<RaftEvent> events) {

    public Ready {
        entries = List.copyOf(entries);
        committedEntries = List.copyOf(committedEntries);
        leaderMessages = List.copyOf(leaderMessages);
        messages = List.copyOf(messages);
        readStates = List.copyOf(readStates);
        events = List.copyOf(events);
    }

    /** Whether step 2 has anything to write at all. */
    public boolean hasWrites() {
        return snapshot != null || !entries.isEmpty() || hardState != null;
    }

    /** Both message lists, leader messages first. */
    public List<Message> allMessages() {
        if (leaderMessages.isEmpty()) {
            return messages;
        }
        if (messages.isEmpty()) {
            return leaderMessages;
        }
        var all = new java.util.ArrayList<Message>(leaderMessages.size() + messages.size());
        all.addAll(leaderMessages);
        all.addAll(messages);
        return all;
    }
}
