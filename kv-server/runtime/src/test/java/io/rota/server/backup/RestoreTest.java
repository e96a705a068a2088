package io.rota.server.backup;

import com.google.protobuf.ByteString;
import io.rota.client.Maintenance;
import io.rota.client.RotaException;
import io.rota.proto.Member;
import io.rota.proto.SnapshotFile;
import io.rota.proto.SnapshotInfo;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.PersistentState;
import io.rota.raft.storage.RocksDbLogStore;
import io.rota.raft.storage.StorageConfig;
import io.rota.server.cluster.MemberIdentity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A backup file read and checked, and a new cluster's data directory built from it (rota snapshot restore). */
public class RestoreTest {

    @TempDir
    Path dir;

    /** An image of a used cluster: keys, a lease with 2 s of its 30 s left, an old member and a session. */
    public static StoreSnapshot image() {
        return StoreSnapshot.newBuilder().setRevision(42).setAppliedIndex(100).setAppliedTerm(3)
                .setLogTimeMs(50_000).setClockTerm(3).setClockTermElapsedMs(7_000)
                .addKvs(io.rota.proto.KeyValue.newBuilder().setKey(ByteString.copyFromUtf8("a"))
                        .setValue(ByteString.copyFromUtf8("1")).setCreateRevision(40).setModRevision(41).setVersion(2)
                        .setLease(7))
                .addLeases(StoreSnapshot.LeaseImage.newBuilder().setID(7).setTTL(30).setRemainingMs(2_000).setRenewal(90))
                .addMembers(Member.newBuilder().setId(1).setName("old1").setClientAddress("10.0.0.1:2379"))
                .addSessions(StoreSnapshot.SessionImage.newBuilder().setClientId(55).setLastActiveMs(49_000))
                .setCompactRevision(30).setNextMemberId(4)
                .build();
    }

    public static byte[] file(StoreSnapshot image) throws Exception {
        byte[] bytes = image.toByteArray();
        SnapshotInfo info = SnapshotInfo.newBuilder().setRevision(image.getRevision())
                .setAppliedIndex(image.getAppliedIndex()).setAppliedTerm(image.getAppliedTerm()).setClusterId("prod")
                .setMemberId(1).setImageBytes(bytes.length).setKeyCount(image.getKvsCount())
                .setImageSha256(ByteString.copyFrom(MessageDigest.getInstance("SHA-256").digest(bytes))).build();
        return SnapshotFile.newBuilder().setInfo(info).setImage(ByteString.copyFrom(bytes)).build().toByteArray();
    }

    @Test
    void restoreBuildsADataDirWhoseLogStartsFromTheBackupAsANewCluster() throws Exception {
        Path backup = dir.resolve("backup.db");
        Files.write(backup, file(image()));
        BackupFile read = BackupFile.read(backup);
        Path data = dir.resolve("n2");

        Restore.write(read, data, "restored-1", 2, Set.of(1L, 2L, 3L), "n1=1@h:1,n2=2@h:2,n3=3@h:3");

        assertEquals(new MemberIdentity("restored-1", 2, true, "n1=1@h:1,n2=2@h:2,n3=3@h:3", 0),
                MemberIdentity.read(data).orElseThrow());
        try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(data))) {
            PersistentState state = store.load();
            assertEquals(100, state.snapshot().index());
            assertEquals(3, state.snapshot().term());
            assertEquals(Set.of(1L, 2L, 3L), state.snapshot().metadata().configuration().voters());
            assertEquals(3, state.hardState().currentTerm());
            assertEquals(100, state.hardState().commitIndex());
            StoreSnapshot restored;
            try (java.io.InputStream in = io.rota.raft.storage.SnapshotFile.open(state.snapshot().data())) {
                restored = io.rota.server.kv.StoreImage.read(in);
            }
            assertEquals(42, restored.getRevision());
            assertEquals(image().getKvsList(), restored.getKvsList());
            assertEquals(30, restored.getCompactRevision());
            assertEquals(30_000, restored.getLeases(0).getRemainingMs(), "a lease restarts with its full TTL");
            assertEquals(0, restored.getMembersCount(), "the old cluster's addresses are dropped");
            assertEquals(0, restored.getSessionsCount(), "sessions are dropped: clients register anew");
            assertEquals(4, restored.getNextMemberId());
        }
    }

    @Test
    void aNonEmptyDataDirIsRefusedAndLeftAlone() throws Exception {
        Path backup = dir.resolve("backup.db");
        Files.write(backup, file(image()));
        Path data = Files.createDirectories(dir.resolve("n1"));
        Files.writeString(data.resolve("keep"), "x");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Restore.write(BackupFile.read(backup), data, "restored-1", 1, Set.of(1L), "n1=1@h:1"));
        assertTrue(e.getMessage().contains("not empty"), e.getMessage());
        assertEquals(1, Files.list(data).count());
    }

    @Test
    void aDamagedOrTruncatedFileIsRefusedByTheServerAndTheClientAlike() throws Exception {
        byte[] good = file(image());
        byte[] flipped = good.clone();
        flipped[flipped.length - 5] ^= 0x40;
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 10);
        for (byte[] bad : new byte[][] {flipped, truncated, "not a backup".getBytes()}) {
            Path path = dir.resolve("bad.db");
            Files.write(path, bad);
            BackupFile.InvalidBackupException server = assertThrows(BackupFile.InvalidBackupException.class,
                    () -> BackupFile.read(path));
            assertTrue(server.getMessage().contains("not a valid backup"), server.getMessage());
            RotaException client = assertThrows(RotaException.class, () -> Maintenance.verify(new ByteArrayInputStream(bad)));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, client.code());
        }
        assertEquals(42, Maintenance.verify(new ByteArrayInputStream(good)).revision());
    }
}
