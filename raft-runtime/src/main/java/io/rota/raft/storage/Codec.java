package io.rota.raft.storage;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.SnapshotMetadata;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The binary formats of the RocksDB values, each ending in a CRC32C so that every read can tell a
 * damaged record from a good one. Big-endian throughout ({@link ByteBuffer}'s default), so that entry
 * keys sort in index order.
 *
 * <pre>
 * entry key   : index (8)
 * entry value : term (8) | type (1) | data length (4) | data | crc32c(key + everything before) (4)
 * hard state  : currentTerm (8) | votedFor (8) | commitIndex (8) | crc32c (4)
 * compacted   : compactedIndex (8) | compactedTerm (8) | crc32c (4)
 * snapshot    : lastIncludedIndex (8) | lastIncludedTerm (8) | voter count (4) | voters (8 each)
 *               | learner count (4) | learners (8 each) | crc32c (4)
 * </pre>
 * The entry checksum covers the key as well, so a value written under the wrong index is caught too. A
 * snapshot record written before learners existed (issue 13) ends after the voters; it decodes as a
 * configuration without learners.
 */
final class Codec {

    static final int ENTRY_HEADER = 8 + 1 + 4;
    static final int CRC_BYTES = 4;
    /** Voters (or learners) in a snapshot's configuration; a bound so a damaged count cannot make us allocate wildly. */
    static final int MAX_VOTERS = 1024;

    private Codec() {
    }

    /** A record that fails its checksum or does not parse; {@code reason} says which. */
    static final class BadRecordException extends Exception {
        BadRecordException(String reason) {
            super(reason);
        }
    }

    static byte[] key(long index) {
        return ByteBuffer.allocate(8).putLong(index).array();
    }

    static long index(byte[] key) throws BadRecordException {
        if (key.length != 8) {
            throw new BadRecordException("entry key of " + key.length + " bytes");
        }
        return ByteBuffer.wrap(key).getLong();
    }

    static byte[] encodeEntry(Entry e) {
        ByteBuffer b = ByteBuffer.allocate(ENTRY_HEADER + e.data().length + CRC_BYTES);
        b.putLong(e.term()).put((byte) e.type().ordinal()).putInt(e.data().length).put(e.data());
        b.putInt(crc(key(e.index()), b.array(), b.position()));
        return b.array();
    }

    static Entry decodeEntry(long index, byte[] value) throws BadRecordException {
        if (value.length < ENTRY_HEADER + CRC_BYTES) {
            throw new BadRecordException("truncated record (" + value.length + " bytes)");
        }
        ByteBuffer b = ByteBuffer.wrap(value);
        long term = b.getLong();
        int type = b.get();
        int length = b.getInt();
        if (length != value.length - ENTRY_HEADER - CRC_BYTES) {
            throw new BadRecordException("truncated record (data length " + length + " in a "
                    + value.length + "-byte value)");
        }
        int stored = ByteBuffer.wrap(value, value.length - CRC_BYTES, CRC_BYTES).getInt();
        if (stored != crc(key(index), value, value.length - CRC_BYTES)) {
            throw new BadRecordException("checksum mismatch");
        }
        Entry.Type[] types = Entry.Type.values();
        if (type < 0 || type >= types.length || term < 1) {
            throw new BadRecordException("invalid record (type " + type + ", term " + term + ")");
        }
        byte[] data = new byte[length];
        b.get(data);
        return new Entry(index, term, types[type], data);
    }

    static byte[] encodeHardState(HardState hs) {
        return sealed(ByteBuffer.allocate(3 * 8 + CRC_BYTES)
                .putLong(hs.currentTerm()).putLong(hs.votedFor()).putLong(hs.commitIndex()));
    }

    static HardState decodeHardState(byte[] value) throws BadRecordException {
        ByteBuffer b = open(value, 3 * 8);
        try {
            return new HardState(b.getLong(), b.getLong(), b.getLong());
        } catch (IllegalArgumentException e) {
            throw new BadRecordException(e.getMessage());
        }
    }

    /** {@code {compactedIndex, compactedTerm}}. */
    static byte[] encodeCompacted(long index, long term) {
        return sealed(ByteBuffer.allocate(2 * 8 + CRC_BYTES).putLong(index).putLong(term));
    }

    static long[] decodeCompacted(byte[] value) throws BadRecordException {
        ByteBuffer b = open(value, 2 * 8);
        return new long[] {b.getLong(), b.getLong()};
    }

    static byte[] encodeSnapshotMetadata(SnapshotMetadata m) {
        ByteBuffer b = ByteBuffer.allocate(metadataBytes(m) + CRC_BYTES);
        putMetadata(b, m);
        return sealed(b);
    }

    static SnapshotMetadata decodeSnapshotMetadata(byte[] value) throws BadRecordException {
        ByteBuffer body = open(value, value.length - CRC_BYTES);
        // The record is exactly the metadata: learners follow the voters unless it predates them.
        return getMetadata(body, true);
    }

    static int metadataBytes(SnapshotMetadata m) {
        return 8 + 8 + 4 + 8 * m.configuration().voters().size() + 4 + 8 * m.configuration().learners().size();
    }

    static void putMetadata(ByteBuffer b, SnapshotMetadata m) {
        b.putLong(m.lastIncludedIndex()).putLong(m.lastIncludedTerm());
        putIds(b, m.configuration().voters());
        putIds(b, m.configuration().learners());
    }

    /**
     * Reads what {@link #putMetadata} wrote. {@code withLearners}: the learner list follows the voters,
     * unless the buffer ends there (a record written before learners existed); false for a format that
     * never had them.
     */
    static SnapshotMetadata getMetadata(ByteBuffer b, boolean withLearners) throws BadRecordException {
        try {
            long index = b.getLong();
            long term = b.getLong();
            Set<Long> voters = getIds(b, "voter", 1);
            Set<Long> learners = withLearners && b.hasRemaining() ? getIds(b, "learner", 0) : Set.of();
            return new SnapshotMetadata(index, term, new Configuration(voters, learners));
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            throw new BadRecordException("invalid snapshot metadata: " + e);
        }
    }

    private static void putIds(ByteBuffer b, Set<Long> ids) {
        b.putInt(ids.size());
        ids.forEach(b::putLong);
    }

    private static Set<Long> getIds(ByteBuffer b, String what, int min) throws BadRecordException {
        int n = b.getInt();
        if (n < min || n > MAX_VOTERS || b.remaining() < 8L * n) {
            throw new BadRecordException("invalid " + what + " count " + n);
        }
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < n; i++) {
            ids.add(b.getLong());
        }
        return ids;
    }

    /** CRC32C of {@code prefix} followed by {@code bytes[0, length)}. */
    static int crc(byte[] prefix, byte[] bytes, int length) {
        CRC32C c = new CRC32C();
        c.update(prefix);
        c.update(bytes, 0, length);
        return (int) c.getValue();
    }

    static int crc(byte[] bytes, int length) {
        return crc(new byte[0], bytes, length);
    }

    /** Appends the CRC32C of everything written so far; the buffer must have exactly 4 bytes left. */
    private static byte[] sealed(ByteBuffer b) {
        b.putInt(crc(b.array(), b.position()));
        return b.array();
    }

    /** Checks the trailing CRC32C and returns a buffer over the {@code bodyLength} bytes before it. */
    private static ByteBuffer open(byte[] value, int bodyLength) throws BadRecordException {
        if (bodyLength < 0 || value.length != bodyLength + CRC_BYTES) {
            throw new BadRecordException("truncated record (" + value.length + " bytes)");
        }
        int stored = ByteBuffer.wrap(value, bodyLength, CRC_BYTES).getInt();
        if (stored != crc(value, bodyLength)) {
            throw new BadRecordException("checksum mismatch");
        }
        return ByteBuffer.wrap(value, 0, bodyLength);
    }
}
