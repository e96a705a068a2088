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
 */
public final class AuthState {

    /** The user and role that may do anything, as etcd's. */
    public static final String ROOT = "root";
    /** Bound on the verified-token cache: beyond it, tokens are verified (one HMAC) without caching. */
    private static final int MAX_CACHED_TOKENS = 10_000;

    static final AuthState INITIAL = new AuthState(false, 0, new java.util.TreeMap<>(), new java.util.TreeMap<>(), new byte[0]);

    /** A user as stored: name, bcrypt hash, sorted role names. */
    record User(String name, String passwordHash, List<String> roles) {
    }

    private final boolean enabled;
    private final long revision;
    private final SortedMap<String, User> users;
    private final SortedMap<String, AuthRole> roles;
    private final byte[] tokenKey;
    private final Map<String, Permissions> permissions = new ConcurrentHashMap<>();
    private final Map<String, String> verified = new ConcurrentHashMap<>();
    /** Tokens minted for users named by a client certificate: one HMAC per user and revision, not per request. */
    private final Map<String, String> minted = new ConcurrentHashMap<>();

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

    SortedMap<String, User> users() {
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

    /** A token for {@code user} at this revision (the user must exist). */
    public String token(String user) {
        return minted.computeIfAbsent(user, u -> Tokens.sign(tokenKey, u, revision));
    }

    /**
     * The user a token names, if it is signed with this state's key, of this revision, and its user still
     * exists; otherwise null (the caller answers INVALID_AUTH_TOKEN).
     */
    public String userOf(String token) {
        String user = verified.get(token);
        if (user != null) {
            return user;
        }
        Tokens.Claim claim = Tokens.verify(tokenKey, token);
        if (claim == null || claim.revision() != revision || !users.containsKey(claim.user())) {
            return null;
        }
        if (verified.size() < MAX_CACHED_TOKENS) {
            verified.put(token, claim.user());
        }
        return claim.user();
    }
}
