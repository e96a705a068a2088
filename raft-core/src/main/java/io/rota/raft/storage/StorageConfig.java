package io.rota.raft.storage;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where and how a node stores its state. The RocksDB database lives in {@code <dataDir>/log}, snapshot
 * files in {@code <dataDir>/snapshots}.
 *
 * @param dataDir          the node's data directory (created if missing)
 * @param writeBufferBytes RocksDB memtable size: how much log is buffered in memory before a flush
 * @param maxWalBytes      total size of RocksDB write-ahead log files before it forces flushes
 * @param keepInfoLogFiles RocksDB's own diagnostic LOG files kept (they would otherwise grow without bound)
 */
public record StorageConfig(Path dataDir, long writeBufferBytes, long maxWalBytes, int keepInfoLogFiles) {

    public StorageConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        if (writeBufferBytes < 1 << 20 || maxWalBytes < writeBufferBytes || keepInfoLogFiles < 1) {
            throw new IllegalArgumentException("invalid storage config: write buffer " + writeBufferBytes
                    + ", max WAL " + maxWalBytes + ", info log files " + keepInfoLogFiles);
        }
    }

    /** 16 MiB memtable, 64 MiB of WAL, 3 info logs. */
    public static StorageConfig defaults(Path dataDir) {
        return new StorageConfig(dataDir, 16L << 20, 64L << 20, 3);
    }
}
