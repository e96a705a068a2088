package io.rota.raft.storage;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.SnapshotMetadata;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The RocksDB record formats keep a configuration's learners, and read the records written before them. */
class CodecTest {

    @Test
    void snapshotMetadataKeepsLearners() throws Exception {
        SnapshotMetadata m = new SnapshotMetadata(42, 7, new Configuration(Set.of(1L, 2L, 3L), Set.of(4L, 5L)));
        assertEquals(m, Codec.decodeSnapshotMetadata(Codec.encodeSnapshotMetadata(m)));
    }

    @Test
    void snapshotMetadataWrittenBeforeLearnersDecodesWithNone() throws Exception {
        // As issue 12 wrote it: index, term, voter count, voters, crc32c.
        ByteBuffer b = ByteBuffer.allocate(8 + 8 + 4 + 3 * 8 + 4);
        b.putLong(42).putLong(7).putInt(3).putLong(1).putLong(2).putLong(3);
        b.putInt(Codec.crc(b.array(), b.position()));

        assertEquals(new SnapshotMetadata(42, 7, Configuration.of(1L, 2L, 3L)), Codec.decodeSnapshotMetadata(b.array()));
    }

    @Test
    void aDamagedLearnerCountIsRefused() {
        ByteBuffer b = ByteBuffer.allocate(8 + 8 + 4 + 8 + 4 + 4);
        b.putLong(42).putLong(7).putInt(1).putLong(1).putInt(5000);
        b.putInt(Codec.crc(b.array(), b.position()));

        assertThrows(Codec.BadRecordException.class, () -> Codec.decodeSnapshotMetadata(b.array()));
    }

    @Test
    void configurationEntriesKeepTheirType() throws Exception {
        Entry e = Entry.configuration(9, 3, new Configuration(Set.of(1L), Set.of(2L)));
        Entry back = Codec.decodeEntry(9, Codec.encodeEntry(e));
        assertEquals(Entry.Type.CONFIGURATION, back.type());
        assertArrayEquals(e.data(), back.data());
    }
}
