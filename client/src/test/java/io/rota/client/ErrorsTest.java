package io.rota.client;

import io.rota.proto.Error;
import io.rota.proto.WatchResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's one error map: protocol codes, typed facts, transport failures, canceled watches. */
class ErrorsTest {

    @Test
    @DisplayName("every protocol code maps; an unset or unknown one counts as UNAVAILABLE")
    void everyProtocolCodeMaps() {
        Map<Error.Code, RotaException.Code> expected = new EnumMap<>(Error.Code.class);
        expected.put(Error.Code.CODE_UNSPECIFIED, RotaException.Code.UNAVAILABLE);
        expected.put(Error.Code.NOT_LEADER, RotaException.Code.NOT_LEADER);
        expected.put(Error.Code.UNAVAILABLE, RotaException.Code.UNAVAILABLE);
        expected.put(Error.Code.TIMEOUT, RotaException.Code.TIMEOUT);
        expected.put(Error.Code.COMPACTED, RotaException.Code.COMPACTED);
        expected.put(Error.Code.LEASE_NOT_FOUND, RotaException.Code.LEASE_NOT_FOUND);
        expected.put(Error.Code.REQUEST_TOO_LARGE, RotaException.Code.REQUEST_TOO_LARGE);
        expected.put(Error.Code.INVALID_ARGUMENT, RotaException.Code.INVALID_ARGUMENT);
        expected.put(Error.Code.SESSION_EXPIRED, RotaException.Code.SESSION_EXPIRED);
        expected.put(Error.Code.MEMBERSHIP_REFUSED, RotaException.Code.MEMBERSHIP_REFUSED);
        expected.put(Error.Code.NO_SPACE, RotaException.Code.NO_SPACE);
        expected.put(Error.Code.OUTCOME_UNKNOWN, RotaException.Code.TIMEOUT);

        expected.put(Error.Code.PERMISSION_DENIED, RotaException.Code.PERMISSION_DENIED);
        expected.put(Error.Code.AUTH_FAILED, RotaException.Code.AUTH_FAILED);
        expected.put(Error.Code.INVALID_AUTH_TOKEN, RotaException.Code.INVALID_AUTH_TOKEN);
        expected.put(Error.Code.AUTH_NOT_ENABLED, RotaException.Code.AUTH_NOT_ENABLED);
        expected.put(Error.Code.UNRECOGNIZED, RotaException.Code.UNAVAILABLE);
        for (Error.Code code : Error.Code.values()) {
            assertEquals(expected.get(code), Errors.code(code), "a row for " + code);
        }
    }

    @Test
    @DisplayName("a refused membership change carries its reason and retry-after")
    void membershipRefusalIsCarried() {
        RotaException e = Errors.of(Error.newBuilder().setCode(Error.Code.MEMBERSHIP_REFUSED).setMessage("behind")
                .setMembershipRefusal("LEARNER_BEHIND").setRetryAfterMs(1000).build());
        assertEquals(RotaException.Code.MEMBERSHIP_REFUSED, e.code());
        assertEquals("LEARNER_BEHIND", e.membershipRefusal());
        assertEquals(1000, e.retryAfterMs());
    }

    @Test
    @DisplayName("an error's typed facts travel into the exception: compact revision, retry-after; the message for humans")
    void typedFactsAreCopied() {
        RotaException compacted = Errors.of(Error.newBuilder().setCode(Error.Code.COMPACTED).setMessage("too old")
                .setCompactRevision(41).build());
        assertEquals(RotaException.Code.COMPACTED, compacted.code());
        assertEquals(41, compacted.compactRevision());
        assertEquals("COMPACTED: too old", compacted.getMessage());

        RotaException full = Errors.of(Error.newBuilder().setCode(Error.Code.UNAVAILABLE).setMessage("store full")
                .setRetryAfterMs(1_000).build());
        assertEquals(1_000, full.retryAfterMs());
        assertEquals(0, Errors.of(Error.newBuilder().setCode(Error.Code.TIMEOUT).build()).retryAfterMs());
    }

    @Test
    @DisplayName("a canceled watch is read from its cancel code, not its reason text")
    void canceledWatchFromFields() {
        RotaException compacted = Errors.ofCanceledWatch(WatchResponse.newBuilder().setCanceled(true)
                .setCancelCode(WatchResponse.CancelCode.COMPACTED).setCompactRevision(12)
                .setCancelReason("history begins after 12").build());
        assertEquals(RotaException.Code.COMPACTED, compacted.code());
        assertEquals(12, compacted.compactRevision());

        RotaException misleading = Errors.ofCanceledWatch(WatchResponse.newBuilder().setCanceled(true)
                .setCancelCode(WatchResponse.CancelCode.MEMBER_STOPPING).setCancelReason("COMPACTED, or so it says")
                .build());
        assertEquals(RotaException.Code.UNAVAILABLE, misleading.code(), "reason text is never parsed");
        assertTrue(misleading.getMessage().contains("COMPACTED, or so it says"), "but it is quoted for humans");
    }

    @Test
    @DisplayName("transport failures: a timeout is TIMEOUT, a carried RotaException stays itself, anything else UNAVAILABLE")
    void transportFailures() {
        RotaException t = Errors.of(new CompletionException(new TimeoutException()), "h:1", "no answer from h:1");
        assertEquals(RotaException.Code.TIMEOUT, t.code());
        assertEquals("TIMEOUT: no answer from h:1", t.getMessage());

        RotaException lost = new RotaException(RotaException.Code.UNAVAILABLE, "connection lost");
        assertSame(lost, Errors.of(new CompletionException(new ExecutionException(lost)), "h:1", "-"));

        RotaException io = Errors.of(new IOException("reset"), "h:1", "-");
        assertEquals(RotaException.Code.UNAVAILABLE, io.code());
        assertTrue(io.getMessage().contains("h:1: java.io.IOException: reset"), io.getMessage());
    }

    @Test
    @DisplayName("await throws the RotaException a future failed with")
    void await() {
        RotaException invalid = new RotaException(RotaException.Code.INVALID_ARGUMENT, "empty key");
        assertSame(invalid, assertThrows(RotaException.class,
                () -> Errors.await(CompletableFuture.failedFuture(invalid))));
        assertEquals("x", Errors.await(CompletableFuture.completedFuture("x")));
    }
}
