package io.rota.raft.storage;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static io.rota.raft.storage.StorageFixtures.CONFIG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SnapshotStoreTest {

    @TempDir
    Path dir;

    @Test
    void theNewestSnapshotComesBackVerified() {
        SnapshotStore store = new SnapshotStore(dir);
        assertTrue(store.latest().isEmpty());
        save(store, new SnapshotMetadata(10, 1, CONFIG), new byte[] {1, 2, 3});
        save(store, new SnapshotMetadata(25, 2, CONFIG), new byte[] {4, 5});

        Snapshot latest = new SnapshotStore(dir).latest().orElseThrow();
        assertEquals(new SnapshotMetadata(25, 2, CONFIG), latest.metadata());
        assertArrayEquals(new byte[] {4, 5}, StorageFixtures.bytes(latest.data()));
    }

    @Test
    void learnersAreKept() {
        Configuration withLearners = new Configuration(Set.of(1L, 2L, 3L), Set.of(4L));
        save(new SnapshotStore(dir), new SnapshotMetadata(10, 1, withLearners), new byte[] {7});

        Snapshot latest = new SnapshotStore(dir).latest().orElseThrow();
        assertEquals(new SnapshotMetadata(10, 1, withLearners), latest.metadata());
        assertArrayEquals(new byte[] {7}, StorageFixtures.bytes(latest.data()));
    }

    @Test
    void aVersionOneFileWithoutLearnersIsStillRead() throws Exception {
        // Written as before issue 13: magic, version 1, index, term, voters, data length, data, crc32c.
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 8 + 8 + 4 + 3 * 8 + 4 + 2 + 4);
        b.putInt(0x524F5441).put((byte) 1).putLong(10).putLong(1).putInt(3).putLong(1).putLong(2).putLong(3);
        b.putInt(2).put(new byte[] {5, 6});
        b.putInt(Codec.crc(b.array(), b.position()));
        Files.write(dir.resolve(SnapshotStore.name(10, 1)), b.array());

        Snapshot latest = new SnapshotStore(dir).latest().orElseThrow();
        assertEquals(new SnapshotMetadata(10, 1, CONFIG), latest.metadata());
        assertArrayEquals(new byte[] {5, 6}, StorageFixtures.bytes(latest.data()));
    }

    @Test
    void onlyTheNewestTwoAreKept() throws Exception {
        SnapshotStore store = new SnapshotStore(dir);
        for (long i = 1; i <= 5; i++) {
            save(store, new SnapshotMetadata(i * 10, 1, CONFIG), new byte[] {(byte) i});
        }
        assertEquals(List.of(SnapshotStore.name(40, 1), SnapshotStore.name(50, 1)), fileNames());
    }

    /**
     * While a local snapshot is being written on the snapshot thread, a leader's may be written too: two
     * files newer than the one the log refers to. Pruning must not take the referenced one.
     */
    @Test
    void theSnapshotTheLogRefersToIsNeverPruned() throws Exception {
        SnapshotStore store = new SnapshotStore(dir);
        save(store, new SnapshotMetadata(10, 1, CONFIG), new byte[] {1});
        store.protect(new SnapshotMetadata(10, 1, CONFIG));
        save(store, new SnapshotMetadata(20, 1, CONFIG), new byte[] {2});
        save(store, new SnapshotMetadata(30, 2, CONFIG), new byte[] {3});
        assertEquals(List.of(SnapshotStore.name(10, 1), SnapshotStore.name(20, 1), SnapshotStore.name(30, 2)),
                fileNames());

        store.protect(new SnapshotMetadata(30, 2, CONFIG));
        save(store, new SnapshotMetadata(40, 2, CONFIG), new byte[] {4});
        assertEquals(List.of(SnapshotStore.name(30, 2), SnapshotStore.name(40, 2)), fileNames());
        assertTrue(store.contains(new SnapshotMetadata(40, 2, CONFIG)));
    }

    @Test
    void aFlippedByteIsDetected() throws Exception {
        Path file = save(new SnapshotStore(dir), new SnapshotMetadata(10, 1, CONFIG), new byte[64]);
        Files.write(file, StorageFixtures.flipByte(Files.readAllBytes(file)));

        var e = assertThrows(CorruptSnapshotException.class, () -> new SnapshotStore(dir).latest());
        assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
    }

    @Test
    void aTruncatedFileIsDetected() throws Exception {
        Path file = save(new SnapshotStore(dir), new SnapshotMetadata(10, 1, CONFIG), new byte[64]);
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 10));

        assertThrows(CorruptSnapshotException.class, () -> new SnapshotStore(dir).latest());
    }

    @Test
    void leftoverTemporaryFilesAreRemoved() throws Exception {
        Files.write(dir.resolve(SnapshotStore.name(10, 1) + ".tmp"), new byte[] {1});
        assertTrue(new SnapshotStore(dir).latest().isEmpty());
        assertEquals(List.of(), fileNames());
    }

    /** Written as before streamed files (version 2): the 4-byte length before the image. */
    @Test
    void aVersionTwoFileFromBeforeStreamingIsStillRead() throws Exception {
        Configuration withLearners = new Configuration(Set.of(1L, 2L, 3L), Set.of(4L));
        SnapshotMetadata m = new SnapshotMetadata(10, 1, withLearners);
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + Codec.metadataBytes(m) + 4 + 3 + 4);
        b.putInt(0x524F5441).put((byte) 2);
        Codec.putMetadata(b, m);
        b.putInt(3).put(new byte[] {7, 8, 9});
        b.putInt(Codec.crc(b.array(), b.position()));
        Files.write(dir.resolve(SnapshotStore.name(10, 1)), b.array());

        Snapshot latest = new SnapshotStore(dir).latest().orElseThrow();
        assertEquals(m, latest.metadata());
        assertArrayEquals(new byte[] {7, 8, 9}, StorageFixtures.bytes(latest.data()));
    }

    /** An image streams in through a writer; one abandoned half-way (a broken transfer) leaves no file. */
    @Test
    void aStreamedImageRoundTripsAndAnAbandonedOneLeavesNothing() throws Exception {
        byte[] image = new byte[3 * (1 << 20) + 17];
        new java.util.Random(7).nextBytes(image);
        SnapshotMetadata m = new SnapshotMetadata(30, 2, CONFIG);
        try (SnapshotStore.Writer w = SnapshotStore.writer(dir, m)) {
            w.data().write(image, 0, 1000);
            w.data().write(image, 1000, image.length - 1000);
            SnapshotFile file = w.commit();
            assertEquals(image.length, file.size());
        }
        try (SnapshotStore.Writer w = SnapshotStore.writer(dir, new SnapshotMetadata(40, 2, CONFIG))) {
            w.data().write(image, 0, 5000);
        }
        assertEquals(List.of(SnapshotStore.name(30, 2)), fileNames());
        Snapshot latest = new SnapshotStore(dir).latest().orElseThrow();
        assertArrayEquals(image, StorageFixtures.bytes(latest.data()));
    }

    private static Path save(SnapshotStore store, SnapshotMetadata metadata, byte[] image) {
        return store.save(metadata, new SnapshotBytes(image)).path();
    }

    private List<String> fileNames() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }
}
