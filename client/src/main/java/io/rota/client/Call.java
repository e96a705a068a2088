package io.rota.client;

import java.util.LinkedHashMap;
import java.util.Map;

import io.rota.proto.Frame;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/** One call through its attempts: the request, its deadline, where it goes next and how it ended. */
final class Call {

    final Frame.Builder request;
    final boolean mutating;
    /** System.nanoTime() past which no attempt starts. */
    final long deadline;
    /** Completed once, with the answer or the failure the caller gets. */
    final CompletableFuture<Frame> result = new CompletableFuture<>();
    /** Attempts started so far; the backoff grows with them. */
    int attempts;
    /** Where the next attempt goes (a leader hint); null: the pool's preferred member. */
    String target;
    /** The last failure, reported inside the TIMEOUT if the deadline passes. */
    RotaException last;
    /**
     * The configured members whose latest attempt found no client port there, with why (see {@link Unreachable});
     * when it holds every configured member, the call fails at once.
     */
    final Map<String, String> unreachable = new LinkedHashMap<>();
    /**
     * Whether any attempt may have reached a member with the request: if none did, a deadline is UNAVAILABLE
     * (not applied), not TIMEOUT (may or may not have been applied).
     */
    boolean maybeSent;
    /**
     * Whether an attempt under the call's current session may have been applied (it reached a member and got no
     * answer, or a TIMEOUT): if that session then ends, the call is not re-sent under a new one (issue 31).
     */
    boolean mayHaveApplied;
    /**
     * Runs the call again under a new session when the cluster answers SESSION_EXPIRED (set by
     * {@link Caller} when it attaches a session; null for calls without one, which then fail).
     */
    Runnable renewSession;
    /** The auth token the latest attempt was sent with (to renew it once on INVALID_AUTH_TOKEN). */
    String tokenSent = "";
    /** Whether this call already logged in again: a second INVALID_AUTH_TOKEN is final. */
    boolean tokenRenewed;

    Call(Frame.Builder request, boolean mutating, long deadline) {
        this.request = request;
        this.mutating = mutating;
        this.deadline = deadline;
    }

    /** The request's kind for listeners: its body's field name without "_request" ({@code range}, {@code txn}). */
    static String operation(Frame.Builder request) {
        String body = request.getBodyCase().name().toLowerCase(Locale.ROOT);
        return body.endsWith("_request") ? body.substring(0, body.length() - "_request".length()) : body;
    }
}
