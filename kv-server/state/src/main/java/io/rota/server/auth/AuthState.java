package io.rota.server.auth;

import io.rota.proto.AuthRole;
import io.rota.proto.Permission;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One auth revision's state, immutable: what request threads read (through {@link AuthStore#state()}, one
 * volatile read) while the driver thread applies the next change into a new one. Caches each user's merged
 * {@link Permissions} and each verified token, both valid only for this revision, so a change drops them.
 * Tokens themselves are signed and checked against a member-local {@link TokenPolicy} (cluster id, lifetime).
 */
public final class AuthState {

    /** The user and role that may do anything, as etcd's. */
    public static final String ROOT = "root";
    /** Bound on the verified-token cache: beyond it, tokens are verified (one HMAC) without caching. */
    private static final int MAX_CACHED_TOKENS = 10_000;

    static final AuthState INITIAL = new AuthState(false, 0, new java.util.TreeMap<>(), new java.util.TreeMap<>(), new byte[0]);

    /** A user as stored: name, bcrypt hash, sorted role names. */
    public record User(String name, String passwordHash, List<String> roles) {
    }

    private final boolean enabled;
    private final long revision;
    private final SortedMap<String, User> users;
    private final SortedMap<String, AuthRole> roles;
    private final byte[] tokenKey;
    private final Map<String, Permissions> permissions = new ConcurrentHashMap<>();
    /** Verified tokens' claims (their expiry is still checked on every use). */
    private final Map<String, Tokens.Claim> verified = new ConcurrentHashMap<>();
    /** Tokens minted for users named by a client certificate, reused while young (see {@link #token}). */
    private final Map<String, Minted> minted = new ConcurrentHashMap<>();

    AuthState(boolean enabled, long revision, SortedMap<String, User> users, SortedMap<String, AuthRole> roles,
              byte[] tokenKey) {
        this.enabled = enabled;
        this.revision = revision;
        this.users = users;
        this.roles = roles;
        this.tokenKey = tokenKey;
    }

    public boolean enabled() {
        return enabled;
    }

    public long revision() {
        return revision;
    }

    public SortedMap<String, User> users() {
        return users;
    }

    SortedMap<String, AuthRole> roles() {
        return roles;
    }

    byte[] tokenKey() {
        return tokenKey;
    }

    /** Whether {@code user} exists (apply refuses a command of a user deleted since it was checked, issue 33). */
    public boolean isUser(String user) {
        return users.containsKey(user);
    }

    /** Whether {@code user} exists and holds the root role. */
    public boolean isRoot(String user) {
        User u = users.get(user);
        return u != null && u.roles().contains(ROOT);
    }

    /** The merged permissions of {@code user} (nothing for an unknown user; everything for root). */
    public Permissions permissions(String user) {
        return permissions.computeIfAbsent(user, name -> {
            User u = users.get(name);
            if (u == null) {
                return Permissions.NONE;
            }
            if (u.roles().contains(ROOT)) {
                return Permissions.ALL;
            }
            List<Permission> all = new ArrayList<>();
            for (String role : u.roles()) {
                AuthRole r = roles.get(role);
                if (r != null) {
                    all.addAll(r.getPermissionsList());
                }
            }
            return Permissions.of(all);
        });
    }

    /**
     * A token for {@code user} at this revision, valid for {@code policy}'s lifetime (the user must exist; the
     * key must be set: see {@link #hasTokenKey}). Tokens minted for certificate users are reused while more
     * than half their lifetime is left: one HMAC per user and half-lifetime, not per request.
     */
    public String token(String user, TokenPolicy policy) {
        long now = policy.wallMs().getAsLong();
        Minted m = minted.get(user);
        if (m != null && m.policy() == policy && m.expiresAtMs() - now > policy.ttlMs() / 2) {
            return m.token();
        }
        long expires = now + policy.ttlMs();
        String token = Tokens.sign(tokenKey, policy.clusterId(), user, revision, expires);
        if (minted.size() < MAX_CACHED_TOKENS) {
            minted.put(user, new Minted(token, expires, policy));
        }
        return token;
    }

    /** Whether tokens can be signed: false only after a restore, until the leader's new key is applied. */
    public boolean hasTokenKey() {
        return tokenKey.length > 0;
    }

    /**
     * The user a token names, if it is signed with this state's key for {@code policy}'s cluster, of this
     * revision, not expired, and its user still exists; otherwise null (the caller answers INVALID_AUTH_TOKEN,
     * with {@link #whyInvalid} saying why).
     */
    public String userOf(String token, TokenPolicy policy) {
        Tokens.Claim claim = verified.get(token);
        if (claim == null) {
            claim = Tokens.verify(tokenKey, policy.clusterId(), token);
            if (claim == null || claim.revision() != revision || !users.containsKey(claim.user())) {
                return null;
            }
            if (verified.size() < MAX_CACHED_TOKENS) {
                verified.put(token, claim);
            }
        }
        return policy.valid(claim.expiresAtMs()) ? claim.user() : null;
    }

    /** Why {@link #userOf} refused {@code token}: words for the refusal's message (the slow path only). */
    public String whyInvalid(String token, TokenPolicy policy) {
        Tokens.Claim claim = Tokens.verify(tokenKey, policy.clusterId(), token);
        if (claim == null) {
            return "the auth token is not one of this cluster's (malformed, signed with another key, or issued by"
                    + " another cluster or before a restore)";
        }
        if (claim.revision() != revision) {
            return "the auth token was issued before the latest user or role change (auth revision " + revision + ")";
        }
        if (!users.containsKey(claim.user())) {
            return "the auth token's user no longer exists";
        }
        return "the auth token has expired (tokens live " + policy.ttlMs() / 1000 + " s: --auth-token-ttl)";
    }

    private record Minted(String token, long expiresAtMs, TokenPolicy policy) {
    }
}
