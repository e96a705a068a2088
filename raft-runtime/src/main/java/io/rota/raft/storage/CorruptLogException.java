package io.rota.raft.storage;

import java.nio.file.Path;

/**
 * Data this node may already have acknowledged as durable is damaged: a committed log entry, the hard
 * state or the snapshot reference. Fail-stop: dropping it silently could lose a committed entry or let
 * the node vote twice in a term, so an operator must restore the node from a peer.
 */
public class CorruptLogException extends StorageException {

    private final long index;

    /**
     * @param index   the log index found damaged, or -1 when the damage is not in an entry
     * @param dataDir the node's data directory, named so the operator knows what to restore
     * @param what    what was found
     */
    public CorruptLogException(long index, Path dataDir, String what) {
        super(what + " in " + dataDir + (index >= 0 ? " at log index " + index : "")
                + "; this data may have been acknowledged, so it is not dropped: stop this node, wipe "
                + dataDir + " and restore it from a healthy peer");
        this.index = index;
    }

    /** The damaged log index, or -1 when the damage is not in an entry. */
    public long index() {
        return index;
    }
}
