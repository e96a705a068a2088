package io.rota.client.recipes;

import io.rota.testkit.Await;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link JdbcFencing} against a real database (each subclass brings one): the database itself refuses a stale
 * holder's write, whether the holder was paused before its update or its update waited on the newer holder's
 * open transaction. Tokens are what the lock hands out (higher for every later holder); the lock itself is
 * tested against a cluster elsewhere, here the point is what the database does with them.
 */
abstract class JdbcFencingDatabaseTest {

    private static final JdbcFencing ACCOUNTS = JdbcFencing.of("accounts", "id", "fence_token", List.of("note"));

    /** A new connection to the test database, auto-commit on. */
    abstract Connection connect() throws SQLException;

    /** A query counting sessions that wait for a row lock now (to know the stale holder's update is blocked). */
    abstract String lockWaitersQuery();

    @BeforeEach
    void freshTable() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS accounts");
            s.execute("CREATE TABLE accounts (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL, fence_token BIGINT NOT NULL)");
            s.execute("INSERT INTO accounts (id, note, fence_token) VALUES (1, 'created', 0)");
        }
    }

    @Test
    @DisplayName("a holder paused past its lease writes late with its old token: the database rejects the UPDATE")
    void aPausedHoldersLateUpdateIsRejected() throws SQLException {
        try (Connection old = connect(); Connection current = connect()) {
            assertTrue(ACCOUNTS.update(old, 5, 1L, List.of("old holder, before its pause")));
            // The old holder pauses (GC, VM freeze); its lease expires and the next holder gets token 9.
            assertTrue(ACCOUNTS.update(current, 9, 1L, List.of("new holder")));
            assertFalse(ACCOUNTS.update(old, 5, 1L, List.of("old holder, after its pause")),
                    "the late UPDATE with token 5 after token 9 wrote must change nothing");
            assertEquals("new holder 9", row(current));
        }
    }

    @Test
    @DisplayName("a stale update that waits on the newer holder's open transaction is re-checked after it commits")
    void aStaleUpdateBlockedByTheNewerTransactionIsRejected() throws Exception {
        try (Connection newer = connect(); Connection stale = connect(); Connection observer = connect()) {
            newer.setAutoCommit(false);
            stale.setAutoCommit(false);
            assertTrue(ACCOUNTS.update(newer, 9, 1L, List.of("new holder")));   // row locked, not committed
            CompletableFuture<Boolean> staleUpdate = CompletableFuture.supplyAsync(() -> {
                try {
                    boolean applied = ACCOUNTS.update(stale, 5, 1L, List.of("stale holder"));
                    stale.commit();
                    return applied;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Await.until(Duration.ofSeconds(10), () -> lockWaiters(observer) > 0,
                    "the stale holder's UPDATE waiting for the newer holder's row lock");
            newer.commit();
            assertFalse(staleUpdate.get(10, TimeUnit.SECONDS),
                    "after the newer commit, the waiting UPDATE re-reads fence_token 9 and applies to no row");
            assertEquals("new holder 9", row(observer));
        }
    }

    @Test
    @DisplayName("holders racing with random tokens: no update commits once a higher token has committed")
    void racingHoldersNeverCommitBehindAHigherToken() throws Exception {
        long seed = new Random().nextLong();
        List<Long> tokens = new ArrayList<>();
        for (long t = 1; t <= 40; t++) {
            tokens.add(t);
        }
        Collections.shuffle(tokens, new Random(seed));
        AtomicLong highestCommitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (long token : tokens) {
                results.add(pool.submit(() -> {
                    try (Connection c = connect()) {
                        c.setAutoCommit(false);
                        long before = highestCommitted.get();
                        boolean applied = ACCOUNTS.update(c, token, 1L, List.of("holder " + token));
                        c.commit();
                        if (applied) {
                            highestCommitted.accumulateAndGet(token, Math::max);
                        }
                        return applied && token < before
                                ? "token " + token + " committed after token " + before + " had (seed " + seed + ")" : "";
                    }
                }));
            }
            for (Future<String> r : results) {
                assertEquals("", r.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        try (Connection c = connect()) {
            assertEquals("holder 40 40", row(c), "the highest token's write is the one left (seed " + seed + ")");
        }
    }

    private long lockWaiters(Connection c) {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(lockWaitersQuery())) {
            r.next();
            return r.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String row(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT note, fence_token FROM accounts WHERE id = 1")) {
            assertTrue(r.next());
            return r.getString(1) + " " + r.getLong(2);
        }
    }
}
