package io.rota.client;

import io.rota.proto.AuthRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.Frame;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The client's login: its credentials (if the application gave any) and the token the cluster handed out
 * for them. Every frame carries the current token ({@link Connection} attaches it). The client logs in
 * lazily: no login while the cluster answers without one (auth disabled costs nothing), and when a call is
 * answered INVALID_AUTH_TOKEN — no token yet, or one a user or role change made stale — one login serves
 * every call that was refused with the same token, and each of them is retried once.
 *
 * <p>Issue 33: while it holds no token, a client with credentials names its user on every frame
 * ({@code claimed_user}), so a member with auth enabled asks it to log in rather than taking its TLS
 * certificate's CN for its user; and tokens expire ({@code --auth-token-ttl}), so the client logs in again in
 * the background once two thirds of a token's lifetime are gone ({@link #dueForRenewal}).
 */
final class AuthTokens {

    /** No credentials: calls go without a token, and INVALID_AUTH_TOKEN is final. */
    static final AuthTokens NONE = new AuthTokens(null, null);

    private final String user;
    private final char[] password;
    private volatile String token = "";
    private CompletableFuture<String> renewing;
    /** When the token should be renewed ahead of its expiry (System.nanoTime); never before the first login. */
    private volatile long renewAtNanos = Long.MAX_VALUE;
    /** After a failed background renewal, wait this long before the next (the call path renews on refusal). */
    private static final long RETRY_RENEWAL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    AuthTokens(String user, char[] password) {
        this.user = user;
        this.password = password;
    }

    boolean hasCredentials() {
        return user != null;
    }

    String user() {
        return user;
    }

    /** Whether a token is held whose renewal is due, and no login is in progress. */
    synchronized boolean dueForRenewal() {
        return user != null && !token.isEmpty() && System.nanoTime() - renewAtNanos >= 0
                && (renewing == null || renewing.isDone());
    }

    /** The token to send ("" before the first login). */
    String current() {
        return token;
    }

    /**
     * A token newer than {@code stale}: the one another call already got, the login in progress, or a new
     * login sent through {@code send} (which retries like any call and fails with AUTH_FAILED on a wrong
     * password).
     */
    synchronized CompletableFuture<String> renew(String stale, Function<Frame.Builder, CompletableFuture<Frame>> send) {
        if (!token.equals(stale)) {
            return CompletableFuture.completedFuture(token);
        }
        if (renewing == null || renewing.isDone()) {
            Frame.Builder login = Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder()
                    .setAuthenticate(AuthenticateRequest.newBuilder().setName(user).setPassword(new String(password))));
            renewing = send.apply(login).thenApply(f -> {
                long ttlMs = f.getAuthResponse().getTokenTtlMs();
                renewAtNanos = ttlMs > 0
                        ? System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ttlMs * 2 / 3)
                        : Long.MAX_VALUE;
                token = f.getAuthResponse().getToken();
                return token;
            });
            renewing.whenComplete((t, e) -> {
                if (e != null && !token.isEmpty()) {
                    renewAtNanos = System.nanoTime() + RETRY_RENEWAL_NANOS;
                }
            });
        }
        return renewing;
    }
}
