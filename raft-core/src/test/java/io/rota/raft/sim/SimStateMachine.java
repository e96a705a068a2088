package io.rota.raft.sim;

import io.rota.raft.core.Entry;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A deterministic state machine for the simulator: it folds every applied entry into a running hash,
 * so two replicas that applied the same entries in the same order have the same state.
 */
final class SimStateMachine {

    long appliedIndex;
    long stateHash;

    /** Fold one entry into the state; entries must arrive in index order with no gap. */
    void apply(Entry e) {
        if (e.index() != appliedIndex + 1) {
            throw new InvariantViolation("state machine applied entry " + e.index() + " after " + appliedIndex
                    + " (gap or repeat)");
        }
        appliedIndex = e.index();
        stateHash = fold(stateHash, e);
    }

    static long fold(long hash, Entry e) {
        long h = hash * 0x9E3779B97F4A7C15L + e.index();
        h = h * 31 + e.term();
        h = h * 31 + Arrays.hashCode(e.data());
        return h ^ (h >>> 29);
    }

    byte[] snapshot() {
        return ByteBuffer.allocate(16).putLong(appliedIndex).putLong(stateHash).array();
    }

    void restore(byte[] data) {
        ByteBuffer b = ByteBuffer.wrap(data);
        appliedIndex = b.getLong();
        stateHash = b.getLong();
    }
}
