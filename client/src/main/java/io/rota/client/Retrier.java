package io.rota.client;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.StatusRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;

/**
 * The deadline loop: runs a {@link Call}'s attempts until one is answered, a failure is final, or the
 * deadline passes. Each attempt goes to one member and may take at most the attempt timeout; after a
 * failure, {@link Recovery} says what to do, and the next attempt waits the {@link Backoff} (jittered, and
 * at least the server's retry-after). It knows nothing of sessions: a SESSION_EXPIRED call is handed back
 * through {@link Call#renewSession}.
 */
final class Retrier {

    private static final Logger log = LoggerFactory.getLogger(Retrier.class);

    private final ConnectionPool pool;
    private final ClientThreads threads;
    private final ConnectionStates states;
    private final long attemptTimeoutNanos;
    /** The client's call timeout, named in a deadline failure's message. */
    private final long callTimeoutNanos;
    private final RandomGenerator random;
    private final ClientListener listener;
    /** Calls waiting out a backoff: failed by {@link #failBackingOff()}, as the event loop's shutdown drops them. */
    private final Set<Call> backingOff = ConcurrentHashMap.newKeySet();

    Retrier(ConnectionPool pool, ClientThreads threads, ConnectionStates states, long attemptTimeoutNanos,
            long callTimeoutNanos, ClientListener listener) {
        // Each thread's own generator, asked at each use (a ThreadLocalRandom must not be kept for another thread).
        this(pool, threads, states, attemptTimeoutNanos, callTimeoutNanos, () -> ThreadLocalRandom.current().nextLong(),
                listener);
    }

    Retrier(ConnectionPool pool, ClientThreads threads, ConnectionStates states, long attemptTimeoutNanos,
            long callTimeoutNanos, RandomGenerator random) {
        this(pool, threads, states, attemptTimeoutNanos, callTimeoutNanos, random, ClientListener.NONE);
    }

    private Retrier(ConnectionPool pool, ClientThreads threads, ConnectionStates states, long attemptTimeoutNanos,
                    long callTimeoutNanos, RandomGenerator random, ClientListener listener) {
        this.listener = listener;
        this.pool = pool;
        this.threads = threads;
        this.states = states;
        this.attemptTimeoutNanos = attemptTimeoutNanos;
        this.callTimeoutNanos = callTimeoutNanos;
        this.random = random;
    }

    /** Starts (or, after a new session, restarts) {@code call}'s attempts; its result completes once. */
    void start(Call call) {
        if (threads.isClosed()) {
            call.result.completeExceptionally(Errors.closed());
            return;
        }
        long remaining = call.deadline - System.nanoTime();
        if (remaining <= 0) {
            call.result.completeExceptionally(deadlineExceeded(call));
            return;
        }
        call.attempts++;
        String endpoint = call.target != null ? call.target : pool.preferred();
        call.target = null;
        long attemptNanos = Math.min(remaining, attemptTimeoutNanos);
        AtomicBoolean connected = new AtomicBoolean();
        call.tokenSent = pool.tokens().current();
        if (pool.tokens().dueForRenewal() && !call.request.getAuthRequest().hasAuthenticate()) {
            renewAhead();
        }
        pool.connection(endpoint)
                .thenCompose(c -> {
                    connected.set(true);
                    return c.call(call.request);
                })
                .orTimeout(attemptNanos, TimeUnit.NANOSECONDS)
                .whenComplete((frame, e) -> onAnswer(call, endpoint, connected.get(), frame, e));
    }

    /** Fails every call waiting out a backoff (the client is closing; called after {@link ClientThreads#markClosed}). */
    void failBackingOff() {
        for (Call call : backingOff) {
            call.result.completeExceptionally(Errors.closed());
        }
        backingOff.clear();
    }

    /** How many calls wait out a backoff now. */
    int backingOff() {
        return backingOff.size();
    }

    private void onAnswer(Call call, String endpoint, boolean connected, Frame frame, Throwable failure) {
        if (failure != null) {
            // No answer: nothing to follow, so any retryable failure moves on to another member.
            call.last = Errors.of(failure, endpoint, "no answer from " + endpoint + " in time");
            states.failed(endpoint, call.last);
            if (!Recovery.of(call.last.code()).retries()) {
                call.result.completeExceptionally(call.last);
                return;
            }
            Optional<String> unreachable = Unreachable.describe(failure);
            if (unreachable.isPresent()) {
                call.unreachable.put(endpoint, unreachable.get());
                boolean reached = Unreachable.mayHaveReachedAMember(failure);
                call.maybeSent |= reached;
                call.mayHaveApplied |= reached;
                if (call.unreachable.keySet().containsAll(pool.endpoints())) {
                    call.result.completeExceptionally(unreachable(call));
                    return;
                }
            } else {
                call.unreachable.remove(endpoint);
                call.maybeSent |= connected;
                call.mayHaveApplied |= connected;
            }
            pool.avoid(endpoint);
            retryLater(call);
            return;
        }
        call.unreachable.remove(endpoint);
        call.maybeSent = true;
        if (!frame.hasError()) {
            pool.prefer(endpoint);
            String hint = frame.getLeaderHint();
            if (!hint.isEmpty() && !hint.equals(endpoint) && pool.endpoints().contains(hint)) {
                // A follower answered (it forwarded a write, or served a read) and named the leader, one of the
                // members this client was given: go there first from now on, rather than paying the
                // forwarding hop on every call. A leader outside the given list is left alone: the list is
                // the application's choice (one pinned member, a proxy).
                preferLeader(hint, endpoint);
            }
            states.answered(endpoint);
            call.result.complete(frame);
            return;
        }
        Error error = frame.getError();
        call.last = Errors.of(error);
        if (error.getCode() == Error.Code.OUTCOME_UNKNOWN) {
            // The cluster may have applied it and no longer knows: asking again cannot tell (issue 31).
            call.result.completeExceptionally(call.last);
            return;
        }
        call.mayHaveApplied |= error.getCode() == Error.Code.TIMEOUT;
        if (Recovery.of(call.last.code()) == Recovery.ANOTHER_MEMBER) {
            states.failed(endpoint, call.last);   // up, but no leader (or overloaded): not a working cluster
        } else {
            states.answered(endpoint);
        }
        switch (Recovery.of(call.last.code())) {
            case FOLLOW_LEADER -> followLeader(call, endpoint, error);
            case ANOTHER_MEMBER -> {
                pool.avoid(endpoint);
                retryLater(call);
            }
            case NEW_SESSION -> {
                if (call.renewSession != null && call.mayHaveApplied) {
                    // An earlier attempt may have been applied before the session ended: re-sending it under a
                    // new session could apply it twice, so the caller hears "outcome unknown" (thesis §6.3).
                    call.result.completeExceptionally(new RotaException(RotaException.Code.TIMEOUT, "outcome unknown:"
                            + " the session ended (expired or evicted) after an attempt that may have been applied;"
                            + " not sent again (" + call.last.getMessage() + ")", call.last));
                } else if (call.renewSession != null) {
                    call.renewSession.run();   // not applied: a new session and a new sequence are safe
                } else {
                    call.result.completeExceptionally(call.last);
                }
            }
            case NEW_TOKEN -> renewToken(call);
            case FAIL -> call.result.completeExceptionally(outcomeOf(call));
        }
    }

    /**
     * The failure a write hears when the cluster refused its latest attempt. A refusal says that attempt was not
     * applied — not that an earlier one, which reached a member and got no answer, was not. Issue 33: if the
     * refusal is an auth one that a change in between can bring about (a permission revoked, a password changed,
     * a token gone stale), the caller hears "outcome unknown", as after a lost session (thesis §6.3), never a
     * refusal it would take for "nothing happened". A refusal of the request's own values (INVALID_ARGUMENT,
     * REQUEST_TOO_LARGE) would have met the first attempt too, and stays as it is. (LEASE_NOT_FOUND and NO_SPACE
     * can follow an applied attempt too; the recipes act on those codes, so they are left as they are.)
     */
    static RotaException outcomeOf(Call call) {
        boolean couldFollowAnApply = switch (call.last.code()) {
            case PERMISSION_DENIED, AUTH_FAILED, INVALID_AUTH_TOKEN -> true;
            default -> false;
        };
        if (!call.mutating || !call.mayHaveApplied || !couldFollowAnApply) {
            return call.last;
        }
        return new RotaException(RotaException.Code.TIMEOUT, "outcome unknown: an earlier attempt reached a member"
                + " and its outcome was never learned, so it may have been applied; the last attempt was refused ("
                + call.last.getMessage() + "), which does not say what the earlier one did", call.last);
    }

    /**
     * INVALID_AUTH_TOKEN (not applied): log in again with the client's credentials and retry — once per call,
     * so a user whose login keeps failing gets the error, not a loop. Without credentials the error is final.
     */
    private void renewToken(Call call) {
        AuthTokens tokens = pool.tokens();
        if (!tokens.hasCredentials() || call.tokenRenewed || call.request.getAuthRequest().hasAuthenticate()) {
            call.result.completeExceptionally(tokens.hasCredentials() ? outcomeOf(call) : new RotaException(
                    RotaException.Code.INVALID_AUTH_TOKEN, call.last.getMessage().replaceFirst("^INVALID_AUTH_TOKEN: ", "")
                    + " (this client has no credentials: RotaClient.builder().credentials(user, password))"));
            return;
        }
        call.tokenRenewed = true;
        tokens.renew(call.tokenSent, login -> {
            Call authenticate = new Call(login, false, call.deadline);
            start(authenticate);
            return authenticate.result;
        }).whenComplete((token, e) -> {
            if (e != null) {
                Throwable cause = Errors.unwrap(e);
                if (cause instanceof RotaException refused) {
                    call.last = refused;   // a login refused now (a password changed) after an attempt that may have applied
                    call.result.completeExceptionally(outcomeOf(call));
                } else {
                    call.result.completeExceptionally(cause);
                }
            } else {
                log.debug("logged in again as {}; retrying {}", tokens.user(), call.request.getBodyCase());
                start(call);
            }
        });
    }

    /**
     * Log in again before the token expires (issue 33: tokens live --auth-token-ttl), in the background: calls
     * go on with the current token meanwhile, and one that is refused for it renews as {@link #renewToken} does.
     */
    private void renewAhead() {
        AuthTokens tokens = pool.tokens();
        tokens.renew(tokens.current(), login -> {
            Call authenticate = new Call(login, false, System.nanoTime() + callTimeoutNanos);
            start(authenticate);
            return authenticate.result;
        }).whenComplete((token, e) -> {
            if (e != null) {
                log.debug("renewing the auth token of {} ahead of its expiry failed: {}", tokens.user(), e.toString());
            }
        });
    }

    /** The error's leader hint: its endpoint, else its id looked up by Status, else another member. */
    private void followLeader(Call call, String endpoint, Error error) {
        if (!error.getLeaderEndpoint().isEmpty()) {
            call.target = error.getLeaderEndpoint();
            preferLeader(call.target, endpoint);
            retryLater(call);
        } else if (error.getLeaderId() != 0) {
            findLeader(call, endpoint, error.getLeaderId());
        } else {
            pool.avoid(endpoint);
            retryLater(call);
        }
    }

    /** The leader's client address from a Status call on {@code endpoint}, then retry there. */
    private void findLeader(Call call, String endpoint, long leaderId) {
        long remaining = call.deadline - System.nanoTime();
        pool.connection(endpoint)
                .thenCompose(c -> c.call(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance())))
                .orTimeout(Math.max(1, Math.min(remaining, attemptTimeoutNanos)), TimeUnit.NANOSECONDS)
                .whenComplete((status, e) -> {
                    if (e == null && status.hasStatusResponse()) {
                        for (Member m : status.getStatusResponse().getMembersList()) {
                            if (m.getId() == leaderId && !m.getClientAddress().isEmpty()) {
                                call.target = m.getClientAddress();
                                preferLeader(call.target, endpoint);
                            }
                        }
                    }
                    if (call.target == null) {
                        pool.avoid(endpoint);
                    }
                    retryLater(call);
                });
    }

    /** Sends to {@code leader} (named by {@code from}) from now on; the listener hears of it when it is news. */
    private void preferLeader(String leader, String from) {
        boolean news = !leader.equals(pool.knownLeader());
        pool.leaderHint(leader, from);
        if (news) {
            listener.leaderChanged(leader);
        }
    }

    private void retryLater(Call call) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(call.deadline - System.nanoTime());
        if (remainingMs <= 0) {
            call.result.completeExceptionally(deadlineExceeded(call));
            return;
        }
        if (call.last != null) {
            listener.retrying(Call.operation(call.request), call.last);
        }
        long retryAfterMs = call.last == null ? 0 : call.last.retryAfterMs();
        long delay = Math.min(remainingMs, Backoff.jitteredMs(call.attempts, retryAfterMs, random));
        if (log.isDebugEnabled()) {
            log.debug("retrying {} in {} ms (attempt {} failed: {})", call.request.getBodyCase(), delay,
                    call.attempts, call.last == null ? "-" : call.last.getMessage());
        }
        // Registered before `closed` is read, as close() marks the client closed before it fails the
        // registered calls: either this call sees the close, or the close sees this call.
        backingOff.add(call);
        if (threads.isClosed()) {
            backingOff.remove(call);
            call.result.completeExceptionally(Errors.closed());
            return;
        }
        boolean scheduled = threads.schedule(() -> {
            backingOff.remove(call);
            start(call);
        }, delay);
        if (!scheduled) {   // the client is closing
            backingOff.remove(call);
            call.result.completeExceptionally(Errors.closed());
        }
    }

    /**
     * Every configured member is unreachable in a way that waiting does not mend soon (unknown host, refused, not a
     * client port): UNAVAILABLE now, naming each cause, instead of retrying until the deadline — nothing was
     * applied: the request was not sent, or went to something that is not a member's client port; TIMEOUT if an
     * attempt's connection closed after the request without an answer, which a crashed member also does.
     */
    private RotaException unreachable(Call call) {
        StringBuilder causes = new StringBuilder();
        for (Map.Entry<String, String> e : call.unreachable.entrySet()) {
            causes.append(causes.length() == 0 ? "" : "; ").append(e.getKey()).append(": ").append(e.getValue());
        }
        if (call.maybeSent) {
            // An attempt's connection closed after the request without an answer: a crashed member does that too,
            // so the request may have been applied — TIMEOUT's meaning, never UNAVAILABLE's "not applied".
            return new RotaException(RotaException.Code.TIMEOUT, "no member reachable (" + causes + "); a request"
                    + " that reached a member before its connection closed may or may not have been applied", call.last);
        }
        return new RotaException(RotaException.Code.UNAVAILABLE, "no member reachable, nothing was sent to a member ("
                + causes + ")", call.last);
    }

    private RotaException deadlineExceeded(Call call) {
        String last = call.last == null ? "" : "; last failure: " + call.last.getMessage();
        if (!call.maybeSent && call.attempts > 0) {
            // No attempt ever had a connection to write on (refused, or still connecting): not applied.
            return new RotaException(RotaException.Code.UNAVAILABLE, "no member could be connected to within "
                    + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms after " + call.attempts + " attempt(s)"
                    + last, call.last);
        }
        return new RotaException(RotaException.Code.TIMEOUT, "no answer within "
                + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms after " + call.attempts + " attempt(s)" + last,
                call.last);
    }
}
