package io.rota.client;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.StatusResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The deadline loop alone, against scripted members: retry-after, session hand-back, close. */
class RetrierTest {

    /** No jitter: the delay is the fixed half of the backoff, so timings are predictable. */
    private static final RandomGenerator NO_JITTER = () -> 0;

    private final ClientThreads threads = new ClientThreads();

    @AfterEach
    void shutdown() {
        threads.shutdown();
    }

    private Retrier retrier(FakeMember member) {
        ConnectionPool pool = new ConnectionPool(List.of(member.endpoint()), threads.eventLoop, Duration.ofSeconds(1));
        return new Retrier(pool, threads, new ConnectionStates(pool, threads, TimeUnit.SECONDS.toNanos(1)),
                TimeUnit.SECONDS.toNanos(1), TimeUnit.SECONDS.toNanos(5), NO_JITTER);
    }

    private static Call read(long timeoutMs) {
        return new Call(Frame.newBuilder().setRangeRequest(RangeRequest.getDefaultInstance()), false,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    }

    private static Frame.Builder error(Error.Code code, long retryAfterMs) {
        return Frame.newBuilder().setError(Error.newBuilder().setCode(code).setMessage("scripted " + code)
                .setRetryAfterMs(retryAfterMs));
    }

    private static Frame.Builder ok() {
        return Frame.newBuilder().setRangeResponse(RangeResponse.getDefaultInstance());
    }

    @Test
    @DisplayName("UNAVAILABLE with retry_after_ms: the next attempt waits at least that long, then succeeds")
    void honoursTheServersRetryAfter() throws Exception {
        List<Long> arrivals = new CopyOnWriteArrayList<>();
        AtomicInteger n = new AtomicInteger();
        try (FakeMember m = new FakeMember(f -> {
            if (f.hasStatusRequest()) {   // the connection-state probe, after its one member failed
                return Frame.newBuilder().setStatusResponse(StatusResponse.getDefaultInstance());
            }
            arrivals.add(System.nanoTime());
            return n.incrementAndGet() == 1 ? error(Error.Code.UNAVAILABLE, 400) : ok();
        })) {
            Call call = read(5_000);
            retrier(m).start(call);
            assertTrue(call.result.get(5, TimeUnit.SECONDS).hasRangeResponse());
            assertEquals(2, arrivals.size());
            long gapMs = TimeUnit.NANOSECONDS.toMillis(arrivals.get(1) - arrivals.get(0));
            assertTrue(gapMs >= 400, "waited " + gapMs + " ms, the backoff alone is 10 ms");
            assertEquals(2, call.attempts);
        }
    }

    @Test
    @DisplayName("a write refused PERMISSION_DENIED after an attempt that may have applied hears 'outcome unknown'")
    void aRefusalAfterAMaybeAppliedAttemptIsOutcomeUnknown() throws Exception {
        AtomicInteger n = new AtomicInteger();
        try (FakeMember m = new FakeMember(f -> {
            if (f.hasStatusRequest()) {
                return Frame.newBuilder().setStatusResponse(StatusResponse.getDefaultInstance());
            }
            // The first attempt times out (it may have been applied), then the user's permission is revoked.
            return n.incrementAndGet() == 1 ? error(Error.Code.TIMEOUT, 0) : error(Error.Code.PERMISSION_DENIED, 0);
        })) {
            Retrier retrier = retrier(m);
            Call write = new Call(Frame.newBuilder().setPutRequest(io.rota.proto.PutRequest.getDefaultInstance()), true,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            retrier.start(write);
            CompletionException e = assertThrows(CompletionException.class, write.result::join);
            RotaException outcome = assertInstanceOf(RotaException.class, e.getCause());
            assertEquals(RotaException.Code.TIMEOUT, outcome.code(), outcome.getMessage());
            assertTrue(outcome.getMessage().contains("outcome unknown") && outcome.getMessage()
                    .contains("PERMISSION_DENIED"), outcome.getMessage());

            // A read, or a write refused at its first attempt, hears the refusal itself.
            n.set(1);
            Call fresh = new Call(Frame.newBuilder().setPutRequest(io.rota.proto.PutRequest.getDefaultInstance()), true,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            retrier.start(fresh);
            CompletionException refused = assertThrows(CompletionException.class, fresh.result::join);
            assertEquals(RotaException.Code.PERMISSION_DENIED,
                    assertInstanceOf(RotaException.class, refused.getCause()).code());
        }
    }

    @Test
    @DisplayName("SESSION_EXPIRED goes back through Call.renewSession; without one it is final")
    void sessionExpiredIsHandedBack() throws Exception {
        try (FakeMember m = new FakeMember(f -> error(Error.Code.SESSION_EXPIRED, 0))) {
            Retrier retrier = retrier(m);
            Call withoutSession = read(5_000);
            retrier.start(withoutSession);
            CompletionException e = assertThrows(CompletionException.class, withoutSession.result::join);
            assertEquals(RotaException.Code.SESSION_EXPIRED, assertInstanceOf(RotaException.class, e.getCause()).code());

            AtomicBoolean renewed = new AtomicBoolean();
            Call inSession = read(5_000);
            inSession.renewSession = () -> {
                renewed.set(true);
                inSession.result.complete(ok().build());
            };
            retrier.start(inSession);
            inSession.result.get(5, TimeUnit.SECONDS);
            assertTrue(renewed.get());
        }
    }

    @Test
    @DisplayName("a call waiting out a backoff fails at once when the client closes (the event loop would drop it)")
    void closingFailsTheCallsThatBackOff() throws Exception {
        try (FakeMember m = new FakeMember(f -> error(Error.Code.UNAVAILABLE, 60_000))) {
            Retrier retrier = retrier(m);
            Call call = read(120_000);
            retrier.start(call);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (retrier.backingOff() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, retrier.backingOff(), "the call waits out the minute the server asked for");
            assertFalse(call.result.isDone());
            threads.markClosed();
            retrier.failBackingOff();
            CompletionException e = assertThrows(CompletionException.class, call.result::join);
            assertTrue(e.getCause().getMessage().contains("the client is closed"), e.getCause().getMessage());
            assertEquals(0, retrier.backingOff());
        }
    }

    @Test
    @DisplayName("past the deadline the call fails with TIMEOUT naming its attempts and last failure")
    void deadline() throws Exception {
        try (FakeMember m = new FakeMember(f -> error(Error.Code.UNAVAILABLE, 0))) {
            Call call = read(300);
            retrier(m).start(call);
            CompletionException e = assertThrows(CompletionException.class, call.result::join);
            RotaException r = assertInstanceOf(RotaException.class, e.getCause());
            assertEquals(RotaException.Code.TIMEOUT, r.code());
            // The last failure is the scripted UNAVAILABLE, or the last attempt cut short by the deadline.
            assertTrue(r.getMessage().matches(".*after \\d+ attempt\\(s\\); last failure: (UNAVAILABLE|TIMEOUT): .*"),
                    r.getMessage());
            assertTrue(call.attempts >= 2, "retried: " + call.attempts);
        }
    }
}
