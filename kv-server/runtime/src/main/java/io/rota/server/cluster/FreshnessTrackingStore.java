package io.rota.server.cluster;

import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.node.Bootstrap;
import io.rota.raft.storage.ForwardingLogStore;
import io.rota.raft.storage.LogStore;

/**
 * A {@link LogStore} that passes everything through and notes whether this member is <em>fresh</em> in the
 * sense of the peer handshake (docs/design.md M12): it loaded nothing at start — no entry but its own
 * bootstrap entry (MF4), no snapshot —
 * and has persisted no entry or snapshot since. A member's own elections change only its hard state, so a
 * lone restarted member stays fresh until a leader sends it the log; a member restarted on its old data is
 * never fresh, whatever its identity file says.
 */
public final class FreshnessTrackingStore extends ForwardingLogStore {

    private volatile boolean emptyAtLoad;
    private volatile boolean receivedLog;

    public FreshnessTrackingStore(LogStore inner) {
        super(inner);
    }

    /** Loaded empty and nothing received since. */
    public boolean emptyLog() {
        return emptyAtLoad && !receivedLog;
    }

    @Override
    public PersistentState load() {
        PersistentState state = inner.load();
        // The bootstrap entry (design MF4) is this member's own write, not anything a leader sent it.
        emptyAtLoad = Bootstrap.holdsAtMostTheInitialConfiguration(state);
        return state;
    }

    @Override
    public void persist(Ready ready) {
        inner.persist(ready);
        if (ready.snapshot() != null || !ready.entries().isEmpty()) {
            receivedLog = true;
        }
    }
}
