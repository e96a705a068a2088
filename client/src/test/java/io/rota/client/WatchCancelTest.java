package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.Event;
import io.rota.proto.Frame;
import io.rota.proto.ResponseHeader;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A watch ends or resumes on the cancel's typed fields (cancel_code, resume_revision), never on its reason text. */
class WatchCancelTest {

    private static Frame.Builder response(WatchResponse.Builder r) {
        return Frame.newBuilder().setWatchResponse(r.setWatchId(1));
    }

    private static Frame.Builder created(long revision) {
        return response(WatchResponse.newBuilder().setCreated(true)
                .setHeader(ResponseHeader.newBuilder().setRevision(revision)));
    }

    private static Frame.Builder event(long revision) {
        return response(WatchResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setRevision(revision))
                .addEvents(Event.newBuilder().setKv(io.rota.proto.KeyValue.newBuilder()
                        .setKey(ByteString.copyFromUtf8("k")).setModRevision(revision))));
    }

    private static List<Long> starts(FakeMember m) {
        return m.received.stream().filter(Frame::hasWatchRequest).map(f -> f.getWatchRequest().getCreateRequest())
                .map(WatchCreateRequest::getStartRevision).toList();
    }

    @Test
    @DisplayName("FELL_BEHIND with resume_revision: the watch reopens from its next revision and misses nothing")
    void fellBehindResumes() throws Exception {
        try (FakeMember m = FakeMember.streaming(f -> {
            long start = f.getWatchRequest().getCreateRequest().getStartRevision();
            if (start == 5) {
                return List.of(created(9), event(5), response(WatchResponse.newBuilder().setCanceled(true)
                        .setCancelCode(WatchResponse.CancelCode.FELL_BEHIND).setResumeRevision(6)
                        .setCancelReason("too slow (wording the client must not depend on)")));
            }
            return List.of(created(9), event(start));
        }); RotaClient rota = RotaClient.connect(m.endpoint())) {
            List<Long> seen = new CopyOnWriteArrayList<>();
            CompletableFuture<Void> both = new CompletableFuture<>();
            CompletableFuture<RotaException> failed = new CompletableFuture<>();
            try (Watch w = rota.watches().watch("k", 5, new WatchListener() {
                @Override
                public void onEvent(WatchEvent e) {
                    seen.add(e.revision());
                    if (seen.size() == 2) {
                        both.complete(null);
                    }
                }

                @Override
                public void onError(RotaException error) {
                    failed.complete(error);
                }
            })) {
                both.get(5, TimeUnit.SECONDS);
                assertEquals(List.of(5L, 6L), seen);
                assertEquals(List.of(5L, 6L), starts(m), "reopened from the next undelivered revision");
                assertTrue(w.isActive());
                assertFalse(failed.isDone(), "not ended");
            }
        }
    }

    @Test
    @DisplayName("COMPACTED by cancel_code ends the watch with the compact revision, whatever the reason says")
    void compactedEnds() throws Exception {
        try (FakeMember m = FakeMember.streaming(f -> List.of(created(20), response(WatchResponse.newBuilder()
                .setCanceled(true).setCancelCode(WatchResponse.CancelCode.COMPACTED).setCompactRevision(12)
                .setCancelReason("history starts later")))); RotaClient rota = RotaClient.connect(m.endpoint())) {
            CompletableFuture<RotaException> failed = new CompletableFuture<>();
            rota.watches().watch("k", 3, new WatchListener() {
                @Override
                public void onEvent(WatchEvent e) {
                }

                @Override
                public void onError(RotaException error) {
                    failed.complete(error);
                }
            });
            RotaException e = failed.get(5, TimeUnit.SECONDS);
            assertEquals(RotaException.Code.COMPACTED, e.code());
            assertEquals(12, e.compactRevision());
            assertEquals(List.of(3L), starts(m), "not reopened");
        }
    }

    @Test
    @DisplayName("a watch closed before its creation is confirmed is still canceled on the member, by the id the client chose")
    void closedBeforeCreatedIsCanceledById() throws Exception {
        CompletableFuture<WatchCreateRequest> create = new CompletableFuture<>();
        CompletableFuture<Long> cancel = new CompletableFuture<>();
        // The member never confirms a creation: the client must cancel without ever having heard an id.
        try (FakeMember m = FakeMember.streaming(f -> {
            if (f.hasWatchRequest() && f.getWatchRequest().hasCreateRequest()) {
                create.complete(f.getWatchRequest().getCreateRequest());
            } else if (f.hasWatchRequest() && f.getWatchRequest().hasCancelRequest()) {
                cancel.complete(f.getWatchRequest().getCancelRequest().getWatchId());
            }
            return List.of();
        }); RotaClient rota = RotaClient.connect(m.endpoint())) {
            Watch w = rota.watches().watch("k", 0, e -> { });
            long id = create.get(5, TimeUnit.SECONDS).getWatchId();
            assertTrue(id > 0, "the client names its watch: " + id);
            w.close();
            assertEquals(id, cancel.get(5, TimeUnit.SECONDS), "the cancel names the watch it created");
            assertFalse(w.isActive());
        }
    }

    @Test
    @DisplayName("the client gives each watch an id of its own, so a late cancel cannot hit another watch")
    void watchIdsAreUnique() throws Exception {
        List<Long> ids = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> three = new CompletableFuture<>();
        try (FakeMember m = FakeMember.streaming(f -> {
            if (f.hasWatchRequest() && f.getWatchRequest().hasCreateRequest()) {
                ids.add(f.getWatchRequest().getCreateRequest().getWatchId());
                if (ids.size() == 3) {
                    three.complete(null);
                }
            }
            return List.of();
        }); RotaClient rota = RotaClient.connect(m.endpoint())) {
            for (int i = 0; i < 3; i++) {
                rota.watches().watch("k" + i, 0, e -> { });
            }
            three.get(5, TimeUnit.SECONDS);
            assertEquals(3, ids.stream().filter(id -> id > 0).distinct().count(), "distinct ids: " + ids);
        }
    }
}
