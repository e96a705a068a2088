package io.rota.server.auth;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 33: tokens live --auth-token-ttl, are bound to their cluster, and die with their key. */
class TokensTest {

    private static final byte[] KEY = new byte[32];
    private static final byte[] OTHER_KEY = new byte[32];

    static {
        KEY[0] = 1;
        OTHER_KEY[0] = 2;
    }

    private final AtomicLong wall = new AtomicLong(1_700_000_000_000L);
    private final TokenPolicy policy = new TokenPolicy("rota-aaaa", 300_000, wall::get);

    private AuthState state(byte[] key) {
        var users = new java.util.TreeMap<String, AuthState.User>();
        users.put("alice", new AuthState.User("alice", "", java.util.List.of()));
        return new AuthState(true, 7, users, new java.util.TreeMap<>(), key);
    }

    @Test
    @DisplayName("a token is valid for its lifetime and refused after it, saying it expired")
    void expires() {
        AuthState s = state(KEY);
        String token = s.token("alice", policy);
        assertEquals("alice", s.userOf(token, policy));
        wall.addAndGet(299_999);
        assertEquals("alice", s.userOf(token, policy), "still inside its 5 minutes (and served from the cache)");
        wall.addAndGet(2);
        assertNull(s.userOf(token, policy), "a cached token expires too");
        assertTrue(s.whyInvalid(token, policy).contains("expired"), s.whyInvalid(token, policy));
    }

    @Test
    @DisplayName("a token of another cluster, or signed with another key (a restored cluster's), is refused")
    void boundToClusterAndKey() {
        String token = state(KEY).token("alice", policy);
        assertNull(state(KEY).userOf(token, policy.withClusterId("rota-bbbb")), "another cluster id");
        assertNull(state(OTHER_KEY).userOf(token, policy), "another key: the cluster after a restore");
        assertNull(state(new byte[0]).userOf(token, policy), "no key at all: a restored cluster before its new key");
        assertTrue(state(KEY).whyInvalid(token, policy.withClusterId("rota-bbbb")).contains("another cluster"));
    }

    @Test
    @DisplayName("a token dated far into the future (a member whose clock runs ahead) is refused")
    void implausibleExpiryIsRefused() {
        AtomicLong ahead = new AtomicLong(wall.get() + 3_600_000);
        String token = state(KEY).token("alice", new TokenPolicy("rota-aaaa", 300_000, ahead::get));
        assertNull(state(KEY).userOf(token, policy));
        ahead.set(wall.get() + TokenPolicy.MAX_SKEW_MS / 2);
        String slightlyAhead = state(KEY).token("alice", new TokenPolicy("rota-aaaa", 300_000, ahead::get));
        assertEquals("alice", state(KEY).userOf(slightlyAhead, policy), "a skew under a minute is tolerated");
    }

    @Test
    @DisplayName("certificate users' minted tokens are renewed before half their lifetime is gone")
    void mintedTokensAreRenewed() {
        AuthState s = state(KEY);
        String first = s.token("alice", policy);
        wall.addAndGet(100_000);
        assertEquals(first, s.token("alice", policy), "young: reused");
        wall.addAndGet(60_000);
        String second = s.token("alice", policy);
        assertTrue(!first.equals(second), "past half its life: a new one");
        assertEquals("alice", s.userOf(second, policy));
    }
}
