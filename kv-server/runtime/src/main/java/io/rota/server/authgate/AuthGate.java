package io.rota.server.authgate;

import com.google.protobuf.ByteString;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthResponse;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.raft.transport.LogLimiter;
import io.rota.server.auth.AuthException;
import io.rota.server.auth.AuthState;
import io.rota.server.auth.AuthStore;
import io.rota.server.auth.Authorization;
import io.rota.server.auth.Permissions;
import io.rota.server.auth.TokenPolicy;
import io.rota.raft.core.LogText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One member's door: who is calling and whether they may. While auth is disabled, {@link AuthStore#state()}
 * says so and the client handler does not call in here at all (one volatile read per request). When it is
 * enabled, every request names its user by a token (see {@code Tokens}) or by its TLS client certificate's
 * common name, and is checked against that user's {@link Permissions} before it is routed: keys of reads,
 * writes and watches, every compare and op of both branches of a transaction; membership, maintenance and
 * auth administration need the root role. Checks run on the member that receives the request, against the
 * auth state it has applied; a forwarded request is checked again by the leader, and every write once more
 * when it is applied, by the same rule ({@link Authorization#refusal(AuthState, String, Command)}, issue 33).
 *
 * <p>Also does the slow work of auth on its own bounded worker thread (bcrypt hashing and verification),
 * and slows password guessing down ({@link FailureLimiter}, per user name and per source address).
 */
public final class AuthGate implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AuthGate.class);
    /** Any client can cause refusals at will: their log lines are bounded. */
    private static final LogLimiter refusals = new LogLimiter(log, 10);
    /** bcrypt calls waiting for the worker; more are refused with UNAVAILABLE rather than queued without end. */
    private static final int MAX_QUEUED = 64;
    private static final int MAX_PASSWORD_BYTES = 72;   // bcrypt reads no further

    private final AuthStore store;
    private final LongSupplier clockMs;
    private final Limiters limiters = new Limiters();
    private volatile String dummyHash;
    /** The cluster id tokens are bound to and their lifetime (issue 33): set once the member knows its id. */
    private volatile TokenPolicy tokens = unboundTokens();
    /** bcrypt's cost for new password hashes (--bcrypt-cost). */
    private volatile int bcryptCost = Passwords.DEFAULT_COST;
    private final SecureRandom random = new SecureRandom();
    private final ThreadPoolExecutor worker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(MAX_QUEUED), r -> {
                Thread t = new Thread(r, "rota-auth");
                t.setDaemon(true);
                return t;
            });

    /** Who called and what they may do: {@code error} set when refused, else the frame to route (with a token). */
    public record Verdict(Frame frame, String user, Error error) {
        static Verdict allow(Frame frame, String user) {
            return new Verdict(frame, user, null);
        }

        static Verdict deny(Error error) {
            return new Verdict(null, null, error);
        }
    }

    public AuthGate(AuthStore store, LongSupplier clockMs) {
        this.store = store;
        this.clockMs = clockMs;
    }

    public AuthStore store() {
        return store;
    }

    /**
     * Bind this member's tokens to {@code clusterId}, with lifetime {@code ttl} (--auth-token-ttl), and hash new
     * passwords at {@code bcryptCost} (--bcrypt-cost). Tokens issued before a change of the id are refused.
     */
    public void configure(String clusterId, java.time.Duration ttl, int bcryptCost, LongSupplier wallMs) {
        Passwords.checkCost(bcryptCost);
        this.tokens = new TokenPolicy(clusterId == null ? "" : clusterId, ttl.toMillis(), wallMs);
        this.bcryptCost = bcryptCost;
    }

    /** The member's token binding and lifetime. */
    public TokenPolicy tokens() {
        return tokens;
    }

    /** Whether requests must be checked (the hot path's one volatile read). */
    public boolean enabled() {
        return store.state().enabled();
    }

    /**
     * The auth state this member has applied, taken when a request arrives. A request is checked on arrival,
     * but a linearizable read answers from the state after its ReadIndex (§6.4), which may hold an auth change
     * this member had not applied yet: auth enabled, a permission revoked. etcd checks such a read after its
     * barrier, so a door compares the state with {@link #changedSince} when the answer is ready and checks the
     * read again only if it changed (one volatile read otherwise).
     */
    public AuthState applied() {
        return store.state();
    }

    /** Whether this member has applied an auth change since {@code seen} (from {@link #applied}). */
    public boolean changedSince(AuthState seen) {
        return store.state() != seen;
    }

    /**
     * Whether {@code frame} is a read answered after a ReadIndex, and so checked again if the auth state changed
     * while it waited. Not a write or an auth change: the leader checks those on its own state, and the
     * change's answer comes after the change itself, which may well have made the caller's token stale.
     */
    public static boolean readsAfterBarrier(Frame frame) {
        return switch (frame.getBodyCase()) {
            case RANGE_REQUEST, LEASE_TIME_TO_LIVE_REQUEST, LEASE_LEASES_REQUEST -> true;
            case ALARM_REQUEST -> frame.getAlarmRequest().getAction() == AlarmRequest.AlarmAction.GET;
            case AUTH_REQUEST -> !isChange(frame.getAuthRequest()) && !frame.getAuthRequest().hasAuthenticate();
            default -> false;
        };
    }

    /**
     * Check {@code frame} against the auth state. {@code certUser} is the TLS client certificate's common name
     * (null without one): with no token, it names the user, and the frame gets a token for it so a member it
     * is forwarded to knows the caller too. Watch frames are checked here as well; a lease revoke also needs
     * the lease's owner and keys at apply (issue 33).
     */
    public Verdict check(Frame frame, String certUser, Object remote) {
        AuthState s = store.state();
        if (!s.enabled()) {
            return Verdict.allow(frame, null);
        }
        if (frame.hasAuthRequest() && frame.getAuthRequest().hasAuthenticate()) {
            return Verdict.allow(frame, null);
        }
        String user;
        TokenPolicy policy = tokens;
        if (!frame.getAuthToken().isEmpty()) {
            user = s.userOf(frame.getAuthToken(), policy);
            if (user == null) {
                String why = s.whyInvalid(frame.getAuthToken(), policy);
                refusals.info("{}: refused {}: {}", remote, frame.getBodyCase(), why);
                return Verdict.deny(error(Error.Code.INVALID_AUTH_TOKEN, why + "; authenticate again"));
            }
        } else if (!frame.getClaimedUser().isEmpty()) {
            // Issue 33: a client given credentials logs in; the certificate's CN never stands in for its user.
            // The SDK's first call after it starts meets this and logs in: a step of the protocol, not a refusal
            // worth a line (nor a share of the refusal lines' budget, which attacks need).
            log.debug("{}: {} names user '{}' but holds no token: asked to log in", remote, frame.getBodyCase(),
                    LogText.escape(frame.getClaimedUser()));
            return Verdict.deny(error(Error.Code.INVALID_AUTH_TOKEN, "auth is enabled: authenticate as '"
                    + frame.getClaimedUser() + "' first (a client certificate does not stand in for a named user)"));
        } else if (certUser != null && s.users().containsKey(certUser)) {
            if (!s.hasTokenKey()) {
                return Verdict.deny(noKeyYet());
            }
            user = certUser;
            frame = frame.toBuilder().setAuthToken(s.token(certUser, policy)).build();
        } else {
            refusals.info("{}: refused {}: auth is enabled and the request names no user", remote, frame.getBodyCase());
            return Verdict.deny(error(Error.Code.INVALID_AUTH_TOKEN, "auth is enabled: authenticate first"
                    + " (rotactl --user NAME, or RotaClient.builder().credentials(...))"
                    + (certUser != null ? "; the client certificate's name '" + certUser + "' is not a user" : "")));
        }
        String refusal = Authorization.refusal(s, user, frame);
        if (refusal != null) {
            refusals.info("{}: user '{}' refused {}: {}", remote, LogText.escape(user), frame.getBodyCase(),
                    LogText.escape(refusal));
            return Verdict.deny(error(Error.Code.PERMISSION_DENIED, "user '" + user + "' " + refusal));
        }
        return Verdict.allow(frame, user);
    }

    /** Whether {@code user} may see the names of {@code keys} (a lease's, listed by time-to-live): null if so. */
    public Error mayList(String user, List<ByteString> keys) {
        AuthState s = store.state();
        if (!s.enabled() || s.isRoot(user)) {
            return null;
        }
        Permissions p = s.permissions(user);
        for (ByteString key : keys) {
            if (!p.canRead(key, ByteString.EMPTY)) {
                refusals.info("user '{}' refused listing a lease's keys: it holds {}", user,
                        LogText.escape(Authorization.range(key, ByteString.EMPTY)));
                return error(Error.Code.PERMISSION_DENIED, "user '" + user + "' may not list this lease's keys: it"
                        + " holds " + Authorization.range(key, ByteString.EMPTY) + ", which the user may not read (ask without keys)");
            }
        }
        return null;
    }

    /**
     * Log in: AUTH_FAILED for an unknown user or a wrong password — the same answer, after the same bcrypt work
     * (an unknown user is checked against a dummy hash of the same cost), so user names cannot be told apart by
     * the answer or its time — or, while this user name or this source address is being slowed down, at once,
     * with retry_after_ms. Failures are counted per user name and per source address (not per connection: a
     * reconnect does not reset them), in tables a flood of made-up names cannot flush (see {@link Limiters}).
     * The bcrypt check runs on the auth worker.
     *
     * @param remote the caller's address (a {@link java.net.InetSocketAddress}, or its text): its host is the source
     */
    public CompletableFuture<AuthResponse> authenticate(String name, String password, Object remote) {
        AuthState s = store.state();
        if (!s.enabled()) {
            return CompletableFuture.failedFuture(new AuthException(error(Error.Code.AUTH_NOT_ENABLED,
                    "auth is not enabled: requests need no login (rotactl auth enable turns it on)")));
        }
        if (!s.hasTokenKey()) {
            return CompletableFuture.failedFuture(new AuthException(noKeyYet()));
        }
        long now = clockMs.getAsLong();
        String source = sourceOf(remote);
        boolean known = s.users().containsKey(name);
        long wait = Math.max(limiters.forUser(known).waitMs(name, now), limiters.sources.waitMs(source, now));
        if (wait > 0) {
            refusals.info("{}: login as '{}' refused without checking: {} ms to wait after repeated failures",
                    source, LogText.escape(name), wait);
            return CompletableFuture.failedFuture(new AuthException(error(Error.Code.AUTH_FAILED,
                    "too many failed logins for user '" + name + "' or from this address; wait " + wait
                            + " ms before trying again").toBuilder().setRetryAfterMs(wait).build()));
        }
        AuthState.User user = s.users().get(name);
        String hash = user == null ? dummyHash() : user.passwordHash();
        return onWorker(() -> {
            if (Passwords.matches(hash, password) && user != null) {
                limiters.forUser(true).succeeded(name);
                limiters.sources.succeeded(source);
                AuthState current = store.state();
                TokenPolicy policy = tokens;
                return AuthResponse.newBuilder().setToken(current.token(name, policy))
                        .setAuthRevision(current.revision()).setEnabled(current.enabled())
                        .setTokenTtlMs(policy.ttlMs()).build();
            }
            long at = clockMs.getAsLong();
            long delay = Math.max(limiters.forUser(known).failed(name, at), limiters.sources.failed(source, at));
            refusals.info("{}: login as '{}' failed: unknown user or wrong password", source, LogText.escape(name));
            Error.Builder e = error(Error.Code.AUTH_FAILED, "authentication failed: unknown user or wrong password"
                    + (delay > 0 ? "; further attempts must wait " + delay + " ms" : "")).toBuilder();
            throw new AuthException(e.setRetryAfterMs(delay).build());
        });
    }

    /**
     * The failure counts: per source address, per existing user, and per made-up name. Made-up names have a
     * table of their own, so a flood of junk names evicts only junk names, never the count of a real user
     * being guessed; and both user tables slow down alike, so the delays do not tell real names from made-up.
     * A source address (one host, or many clients behind one NAT) gets {@link #FREE_SOURCE_FAILURES} free
     * failures before it waits: enough that one client's typo does not slow its neighbours down, few enough
     * that guessing many users' passwords from one place is slowed down as guessing one user's is.
     */
    static final class Limiters {
        static final int FREE_SOURCE_FAILURES = 20;
        final FailureLimiter sources = new FailureLimiter(100_000, FREE_SOURCE_FAILURES);
        final FailureLimiter knownUsers = new FailureLimiter(1_000_000);
        final FailureLimiter otherNames = new FailureLimiter(100_000);

        FailureLimiter forUser(boolean known) {
            return known ? knownUsers : otherNames;
        }
    }

    /** The failure tables (tests). */
    Limiters limiters() {
        return limiters;
    }

    /** A hash no password matches in practice, of the current cost: what an unknown user's login is checked against. */
    private String dummyHash() {
        String h = dummyHash;
        if (h == null || !Passwords.hasCost(h, bcryptCost)) {
            byte[] junk = new byte[32];
            random.nextBytes(junk);
            h = Passwords.hash(java.util.HexFormat.of().formatHex(junk), bcryptCost);
            dummyHash = h;
        }
        return h;
    }

    /** The host part of a caller's address: failures count per host, whatever port a reconnect comes from. */
    static String sourceOf(Object remote) {
        if (remote instanceof java.net.InetSocketAddress a) {
            return a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        }
        String text = String.valueOf(remote);
        if (text.startsWith("/")) {
            text = text.substring(1);
        }
        int colon = text.lastIndexOf(':');
        return colon > 0 && text.substring(colon + 1).chars().allMatch(Character::isDigit) ? text.substring(0, colon) : text;
    }

    private static Error noKeyYet() {
        return error(Error.Code.UNAVAILABLE, "auth is enabled but this cluster has no token key yet (it was restored"
                + " from a backup, which never holds the key); its leader is drawing a new one: retry shortly")
                .toBuilder().setRetryAfterMs(500).build();
    }

    /**
     * The command to propose for an auth change: passwords hashed here (a fresh salt each), a fresh token key
     * for an enable. The caller is the leader; the command is what every member applies.
     */
    public CompletableFuture<AuthCommand> command(AuthRequest req) {
        AuthCommand.Builder c = AuthCommand.newBuilder();
        switch (req.getRequestCase()) {
            case USER_ADD -> {
                var r = req.getUserAdd();
                return hashed(r.getPasswordHash(), r.getPassword(),
                        hash -> c.setUserAdd(r.toBuilder().clearPassword().setPasswordHash(hash)).build());
            }
            case USER_CHANGE_PASSWORD -> {
                var r = req.getUserChangePassword();
                return hashed(r.getPasswordHash(), r.getPassword(),
                        hash -> c.setUserChangePassword(r.toBuilder().clearPassword().setPasswordHash(hash)).build());
            }
            case USER_DELETE -> c.setUserDelete(req.getUserDelete());
            case USER_GRANT_ROLE -> c.setUserGrantRole(req.getUserGrantRole());
            case USER_REVOKE_ROLE -> c.setUserRevokeRole(req.getUserRevokeRole());
            case ROLE_ADD -> c.setRoleAdd(req.getRoleAdd());
            case ROLE_DELETE -> c.setRoleDelete(req.getRoleDelete());
            case ROLE_GRANT_PERMISSION -> c.setRoleGrantPermission(req.getRoleGrantPermission());
            case ROLE_REVOKE_PERMISSION -> c.setRoleRevokePermission(req.getRoleRevokePermission());
            case ENABLE -> c.setEnable(req.getEnable()).setTokenKey(newTokenKey());
            case DISABLE -> c.setDisable(req.getDisable());
            default -> {
                return CompletableFuture.failedFuture(new AuthException(error(Error.Code.INVALID_ARGUMENT,
                        "not an auth change: " + req.getRequestCase())));
            }
        }
        return CompletableFuture.completedFuture(c.build());
    }

    /**
     * The command a leader proposes when auth is enabled without a token key (a cluster restored from a backup):
     * a fresh random key. Issue 33.
     */
    public AuthCommand rotateTokenKeyCommand() {
        return AuthCommand.newBuilder().setRotateTokenKey(io.rota.proto.AuthRotateTokenKey.getDefaultInstance())
                .setTokenKey(newTokenKey()).build();
    }

    private ByteString newTokenKey() {
        byte[] key = new byte[32];
        random.nextBytes(key);
        return ByteString.copyFrom(key);
    }

    /** Whether {@code req} changes the auth state (proposed) rather than reads it or logs in. */
    public static boolean isChange(AuthRequest req) {
        return switch (req.getRequestCase()) {
            case AUTHENTICATE, USER_GET, USER_LIST, ROLE_GET, ROLE_LIST, STATUS, REQUEST_NOT_SET -> false;
            default -> true;
        };
    }

    /** A root token at the current revision, for this member's own internal requests (its publication). */
    public String memberToken() {
        AuthState s = store.state();
        return s.enabled() && s.users().containsKey(AuthState.ROOT) && s.hasTokenKey()
                ? s.token(AuthState.ROOT, tokens) : "";
    }

    private CompletableFuture<AuthCommand> hashed(String clientHash, String password,
                                                  java.util.function.Function<String, AuthCommand> build) {
        if (!clientHash.isEmpty()) {
            return CompletableFuture.failedFuture(new AuthException(error(Error.Code.INVALID_ARGUMENT,
                    "password_hash is set by the server; send the password")));
        }
        int bytes = password.getBytes(StandardCharsets.UTF_8).length;
        if (bytes == 0 || bytes > MAX_PASSWORD_BYTES) {
            return CompletableFuture.failedFuture(new AuthException(error(Error.Code.INVALID_ARGUMENT,
                    "a password needs 1 to " + MAX_PASSWORD_BYTES + " bytes (got " + bytes + ")")));
        }
        int cost = bcryptCost;
        return onWorker(() -> build.apply(Passwords.hash(password, cost)));
    }

    private <T> CompletableFuture<T> onWorker(java.util.function.Supplier<T> task) {
        try {
            return CompletableFuture.supplyAsync(task, worker);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new AuthException(error(Error.Code.UNAVAILABLE,
                    "too many logins and password changes in progress on this member; retry shortly")
                    .toBuilder().setRetryAfterMs(100).build()));
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }

    /**
     * Before the member knows its cluster id (and in tests): bound to the empty id, the default lifetime, the wall
     * clock. Was TokenPolicy.unbound(): the state module reads no clock (issue 34, design HS13).
     */
    public static TokenPolicy unboundTokens() {
        return new TokenPolicy("", TokenPolicy.DEFAULT_TTL.toMillis(), System::currentTimeMillis);
    }

    private static Error error(Error.Code code, String message) {
        return Error.newBuilder().setCode(code).setMessage(message).build();
    }
}
