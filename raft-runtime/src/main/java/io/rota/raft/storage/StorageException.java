package io.rota.raft.storage;

/**
 * Stable storage failed (an I/O or RocksDB error). Unchecked on purpose: a node that cannot make its
 * state durable must not go on answering RPCs (Figure 2), so the runtime's only sensible reaction is to
 * stop.
 */
public class StorageException extends RuntimeException {

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }

    public StorageException(String message) {
        super(message);
    }
}
