package io.rota.server;

import io.rota.client.Maintenance;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.SnapshotSummary;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AlarmType;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SDK's maintenance API against three in-process members: a snapshot streamed in chunks from a follower
 * holds the writes acknowledged before it (it is taken at a linearizable point) and checks; compaction
 * answers and refuses as etcd's; a client can list and disarm alarms but not arm one.
 */
@Tag("cluster")
class MaintenanceApiTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    @Test
    void aSnapshotFromAFollowerHoldsEveryAcknowledgedWriteAndVerifies() throws Exception {
        try (RotaClient client = RotaClient.connect(CLUSTER.get().endpoints())) {
            // Two chunks at least: a value near the request limit, twice.
            String big = "x".repeat(60 * 1024);
            for (int i = 0; i < 20; i++) {
                client.kv().put("snap/" + i, big);
            }
            long revision = client.kv().put("snap/last", "v").revision();
            ByteArrayOutputStream file = new ByteArrayOutputStream();
            List<Long> progress = new ArrayList<>();
            SnapshotSummary saved = client.maintenance().snapshot(CLUSTER.get().endpoint(CLUSTER.get().follower()),
                    file, progress::add);
            assertTrue(saved.revision() >= revision, "taken after the last acknowledged write: " + saved);
            assertTrue(saved.keys() >= 21, saved.toString());
            assertTrue(progress.size() >= 2, "streamed in chunks: " + progress);
            assertEquals(saved.imageBytes(), (long) progress.get(progress.size() - 1));
            assertEquals(saved, Maintenance.verify(new ByteArrayInputStream(file.toByteArray())));
        }
    }

    @Test
    void compactionAnswersTheCompactRevisionAndRefusesFutureAndRepeatedOnes() {
        try (RotaClient client = RotaClient.connect(CLUSTER.get().endpoints())) {
            client.kv().put("compact/k", "1");
            long revision = client.kv().put("compact/k", "2").revision();
            assertEquals(revision - 1, client.maintenance().compact(revision - 1));
            RotaException again = assertThrows(RotaException.class, () -> client.maintenance().compact(revision - 1));
            assertEquals(RotaException.Code.COMPACTED, again.code());
            RotaException future = assertThrows(RotaException.class, () -> client.maintenance().compact(revision + 1000));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, future.code());
        }
    }

    @Test
    void aClientListsAndDisarmsAlarmsButCannotArmOne() {
        try (RotaClient client = RotaClient.connect(CLUSTER.get().endpoints());
             FrameClient raw = new FrameClient(CLUSTER.get().client(0))) {
            assertEquals(List.of(), client.maintenance().alarms());
            Frame refused = raw.call(Frame.newBuilder().setAlarmRequest(AlarmRequest.newBuilder()
                    .setAction(AlarmRequest.AlarmAction.ACTIVATE).setMemberId(1).setAlarm(AlarmType.NOSPACE)));
            assertEquals(Error.Code.INVALID_ARGUMENT, refused.getError().getCode(), refused.toString());
            assertEquals(List.of(), client.maintenance().disarmAlarms());
            assertEquals(List.of(), client.maintenance().alarms());
        }
    }
}
