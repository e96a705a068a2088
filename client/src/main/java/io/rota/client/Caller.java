package io.rota.client;

import io.rota.proto.Frame;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.SessionRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The client's {@link Calls}: every call goes through the {@link Retrier}; a mutating one first gets the
 * client's session and a sequence from it ({@link ClientSession}), which every retry reuses, so the cluster
 * applies it once (Raft thesis §6.3). The session is registered on the first write (itself a retried call,
 * without a session) and again when the cluster says it expired.
 */
final class Caller implements Calls {

    private static final Logger log = LoggerFactory.getLogger(Caller.class);

    private final Retrier retrier;
    private final ClientThreads threads;
    private final long callTimeoutNanos;
    private final ClientListener listener;
    private final Object sessionLock = new Object();
    /** The session, once registering it has started; null before the first write and after it expired. */
    private CompletableFuture<ClientSession<Call>> session;
    /** Whether a session was registered before (guarded by sessionLock): a later registration is a renewal. */
    private boolean registered;

    Caller(Retrier retrier, ClientThreads threads, Duration callTimeout, ClientListener listener) {
        this.retrier = retrier;
        this.listener = listener;
        this.threads = threads;
        this.callTimeoutNanos = callTimeout.toNanos();
    }

    @Override
    public CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating) {
        return execute(request, mutating, callTimeoutNanos);
    }

    @Override
    public CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating, long timeoutNanos) {
        long start = System.nanoTime();
        Call call = new Call(request, mutating, start + timeoutNanos);
        call.result.whenComplete((f, e) -> listener.callEnded(Call.operation(request),
                Duration.ofNanos(System.nanoTime() - start), call.attempts, e == null ? null : Errors.of(e)));
        if (threads.isClosed()) {
            call.result.completeExceptionally(Errors.closed());
            return call.result;
        }
        if (mutating) {
            startInSession(call);
        } else {
            retrier.start(call);
        }
        return call.result;
    }

    @Override
    public Duration callTimeout() {
        return Duration.ofNanos(callTimeoutNanos);
    }

    /**
     * Attaches the session and the call's own sequence (taken once; retries reuse it), then sends — or, if
     * the sequence would fall outside the session's window, queues the call until an older one ends.
     */
    private void startInSession(Call call) {
        session(call).whenComplete((s, e) -> {
            if (e != null) {
                call.result.completeExceptionally(Errors.unwrap(e));
                return;
            }
            long sequence = s.admit(call);
            if (sequence != 0) {
                sendInSession(call, s, sequence);
            }
        });
    }

    private void sendInSession(Call call, ClientSession<Call> s, long sequence) {
        call.renewSession = () -> {
            dropSession(s);
            startInSession(call);
        };
        call.request.setSession(SessionRef.newBuilder().setClientId(s.clientId).setSecret(s.secret)
                .setSequence(sequence).setFirstIncomplete(s.firstIncomplete()));
        call.result.whenComplete((f, e) -> s.ended(sequence).forEach(w -> sendInSession(w.getKey(), s, w.getValue())));
        retrier.start(call);
    }

    /** The client's session, registered on first use (itself a retried call, without a session). */
    private CompletableFuture<ClientSession<Call>> session(Call forCall) {
        synchronized (sessionLock) {
            if (session == null || session.isCompletedExceptionally()) {
                Call register = new Call(Frame.newBuilder()
                        .setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance()), false,
                        forCall.deadline);
                boolean renewal = session != null || registered;
                registered = true;
                session = register.result.thenApply(f -> {
                    long clientId = f.getRegisterSessionResponse().getClientId();
                    if (renewal) {
                        log.info("Rota session re-registered as client {} (the previous one expired or failed to register)",
                                Long.toHexString(clientId));
                    } else {
                        log.debug("Rota session registered as client {}", Long.toHexString(clientId));
                    }
                    return new ClientSession<>(clientId, f.getRegisterSessionResponse().getSecret(),
                            f.getRegisterSessionResponse().getRememberedResponses());
                });
                retrier.start(register);
            }
            return session;
        }
    }

    /** Forget {@code expired} (the server no longer knows it), so the next call registers a new one. */
    private void dropSession(ClientSession<Call> expired) {
        synchronized (sessionLock) {
            if (session != null && session.isDone() && !session.isCompletedExceptionally()
                    && session.join() == expired) {
                log.info("Rota session of client {} expired on the cluster; registering a new one (the call is retried"
                        + " under it, safe as it was not applied)", Long.toHexString(expired.clientId));
                session = null;
            }
        }
    }
}
