package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An SDK watch resumes on another member when its member stops (own cluster: it stops a member). */
@Tag("cluster")
class RotaClientWatchFailoverTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));


    @Test
    @DisplayName("stopping the watch's member: the watch resumes on another and sees every revision once, in order, under concurrent writes")
    void watchResumesOnAnotherMember() throws Exception {
        String all = CLUSTER.get().endpoints();
        try (RotaClient watcher = RotaClient.connect(all);
             RotaClient writer = RotaClient.builder().endpoints(all).callTimeout(Duration.ofSeconds(20)).build()) {
            long from = writer.kv().put("wf/0", "v").revision();
            List<Long> expected = Collections.synchronizedList(new ArrayList<>(List.of(from)));
            RotaClientLeaseWatchTest.Collector c = new RotaClientLeaseWatchTest.Collector();
            try (Watch w = watcher.watches().watchPrefix("wf/", from, c)) {
                for (int i = 1; i <= 20; i++) {
                    expected.add(writer.kv().put("wf/" + i, "v" + i).revision());
                }
                Await.until(Duration.ofSeconds(20), () -> c.size() >= expected.size() && w.endpoint() != null,
                        "the watch streams");
                CompletableFuture<Void> writes = CompletableFuture.runAsync(() -> {
                    for (int i = 21; i <= 60; i++) {
                        expected.add(writer.kv().put("wf/" + i, "v" + i).revision());
                    }
                });
                String streaming = w.endpoint();
                int member = -1;
                for (int m = 0; m < 3; m++) {
                    if (CLUSTER.get().endpoint(m).equals(streaming)) {
                        member = m;
                    }
                }
                assertTrue(member >= 0, streaming);
                CLUSTER.get().stop(member);
                writes.get(60, TimeUnit.SECONDS);
                for (int i = 61; i <= 70; i++) {   // surely after the stop
                    expected.add(writer.kv().put("wf/" + i, "v" + i).revision());
                }
                Await.until(Duration.ofSeconds(30), () -> c.size() >= expected.size(), "every event after the stop");
                assertEquals(expected.stream().sorted().toList(), c.revisions(), "each revision once, in order");
                assertNotNull(w.endpoint());
                assertNotEquals(streaming, w.endpoint());
                assertTrue(w.isActive());
                assertFalse(c.error.isDone(), () -> String.valueOf(c.error.getNow((RotaException) null)));
            }
        }
    }
}
