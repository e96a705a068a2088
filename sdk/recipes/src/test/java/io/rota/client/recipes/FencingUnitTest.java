package io.rota.client.recipes;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** FenceGuard and JdbcFencing without a cluster or a database. */
class FencingUnitTest {

    @Test
    @DisplayName("FenceGuard admits equal and higher tokens and rejects lower ones, also under concurrent writers")
    void fenceGuardRejectsStaleTokens() throws Exception {
        FenceGuard fence = new FenceGuard();
        assertTrue(fence.admit(5));
        assertTrue(fence.admit(5));
        assertTrue(fence.admit(9));
        assertFalse(fence.admit(7));
        StaleTokenException stale = assertThrows(StaleTokenException.class, () -> fence.check(8));
        assertEquals(8, stale.token());
        assertEquals(9, stale.highest());
        assertEquals(9, fence.highest());

        long seed = new Random().nextLong();
        Random random = new Random(seed);
        FenceGuard shared = new FenceGuard();
        AtomicInteger admittedBelowMax = new AtomicInteger();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            long[] tokens = random.longs(2_000, 1, 1_000).toArray();
            writers.add(CompletableFuture.runAsync(() -> {
                for (long t : tokens) {
                    long before = shared.highest();
                    if (shared.admit(t) && t < before) {
                        admittedBelowMax.incrementAndGet();
                    }
                }
            }));
        }
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).join();
        assertEquals(0, admittedBelowMax.get(), "a token below an earlier-seen highest was admitted (seed " + seed + ")");
    }

    @Test
    @DisplayName("JdbcFencing builds the compare-in-WHERE update and binds values, token, id, token in order")
    void jdbcFencingStatement() throws Exception {
        JdbcFencing accounts = JdbcFencing.of("accounts", "id", "fence_token", List.of("balance", "note"));
        assertEquals("UPDATE accounts SET balance = ?, note = ?, fence_token = ? WHERE id = ? AND fence_token <= ?",
                accounts.sql());
        assertThrows(IllegalArgumentException.class,
                () -> JdbcFencing.of("accounts; DROP TABLE x", "id", "fence_token", List.of("balance")));
        assertThrows(IllegalArgumentException.class, () -> JdbcFencing.of("t", "id", "f", List.of()));

        Map<Integer, Object> bound = new TreeMap<>();
        String[] prepared = new String[1];
        PreparedStatement statement = (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "setObject", "setLong" -> {
                        bound.put((Integer) args[0], args[1]);
                        yield null;
                    }
                    case "executeUpdate" -> 1;
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        Connection connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("prepareStatement")) {
                        prepared[0] = (String) args[0];
                        return statement;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        assertTrue(accounts.update(connection, 42L, 7L, List.of(100, "paid")));
        assertEquals(accounts.sql(), prepared[0]);
        assertEquals(Map.of(1, 100, 2, "paid", 3, 42L, 4, 7L, 5, 42L), bound);
        assertThrows(IllegalArgumentException.class, () -> accounts.update(connection, 42L, 7L, List.of(1)));
    }
}
