package io.rota.raft.storage;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where and how a node stores its state. The RocksDB database lives in {@code <dataDir>/log}, snapshot
 * files in {@code <dataDir>/snapshots}. Build one with {@link #builder}, which starts from the
 * {@code DEFAULT_} constants, or derive one with {@link #toBuilder}. Every construction is validated, fields
 * alone and against each other; an error names the field.
 *
 * @param dataDir          the node's data directory (created if missing)
 * @param writeBufferBytes RocksDB memtable size: how much log is buffered in memory before a flush
 * @param maxWalBytes      total size of RocksDB write-ahead log files before it forces flushes
 * @param keepInfoLogFiles RocksDB's own diagnostic LOG files kept (they would otherwise grow without bound)
 */
public record StorageConfig(Path dataDir, long writeBufferBytes, long maxWalBytes, int keepInfoLogFiles) {

    /** 16 MiB memtable: many Readies of entries per flush, little memory per node. */
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 16L << 20;
    /** 64 MiB of WAL (four memtables): bounds the log RocksDB replays on restart. */
    public static final long DEFAULT_MAX_WAL_BYTES = 64L << 20;
    /** Three RocksDB info logs: enough to read what happened before a restart. */
    public static final int DEFAULT_KEEP_INFO_LOG_FILES = 3;
    /** Below 1 MiB a memtable flushes so often that every few Readies pay for an SST file. */
    static final long MIN_WRITE_BUFFER_BYTES = 1 << 20;

    /**
     * Checks every field alone and against each other; throws {@link IllegalArgumentException} naming the
     * field. The WAL limit must hold at least one memtable: RocksDB forces a flush whenever the WAL passes
     * it, so a smaller limit would flush before the memtable is full and make writeBufferBytes meaningless.
     */
    public StorageConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        require(writeBufferBytes >= MIN_WRITE_BUFFER_BYTES, "writeBufferBytes must be at least "
                + MIN_WRITE_BUFFER_BYTES + ", got " + writeBufferBytes);
        require(maxWalBytes >= writeBufferBytes, "maxWalBytes (" + maxWalBytes
                + ") must be at least writeBufferBytes (" + writeBufferBytes + "): the WAL holds a memtable");
        require(keepInfoLogFiles >= 1, "keepInfoLogFiles must be at least 1, got " + keepInfoLogFiles);
    }

    /** The defaults: {@code builder(dataDir).build()}. */
    public static StorageConfig defaults(Path dataDir) {
        return builder(dataDir).build();
    }

    /** A builder for {@code dataDir}, every other field at its default. */
    public static Builder builder(Path dataDir) {
        return new Builder(dataDir);
    }

    /** A builder holding this configuration, to change some of it. */
    public Builder toBuilder() {
        return new Builder(dataDir).writeBufferBytes(writeBufferBytes).maxWalBytes(maxWalBytes)
                .keepInfoLogFiles(keepInfoLogFiles);
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builds a {@link StorageConfig}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private final Path dataDir;
        private long writeBufferBytes = DEFAULT_WRITE_BUFFER_BYTES;
        private long maxWalBytes = DEFAULT_MAX_WAL_BYTES;
        private int keepInfoLogFiles = DEFAULT_KEEP_INFO_LOG_FILES;

        private Builder(Path dataDir) {
            this.dataDir = dataDir;
        }

        public Builder writeBufferBytes(long writeBufferBytes) {
            this.writeBufferBytes = writeBufferBytes;
            return this;
        }

        public Builder maxWalBytes(long maxWalBytes) {
            this.maxWalBytes = maxWalBytes;
            return this;
        }

        public Builder keepInfoLogFiles(int keepInfoLogFiles) {
            this.keepInfoLogFiles = keepInfoLogFiles;
            return this;
        }

        /** The configuration; throws {@link IllegalArgumentException} naming the field when it is invalid. */
        public StorageConfig build() {
            return new StorageConfig(dataDir, writeBufferBytes, maxWalBytes, keepInfoLogFiles);
        }
    }

    /** Where snapshot files live: {@code <dataDir>/snapshots} (also where a follower writes received ones). */
    public Path snapshotDir() {
        return dataDir.resolve("snapshots");
    }
}
