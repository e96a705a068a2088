package io.rota.server.authgate;

import org.bouncycastle.crypto.generators.OpenBSDBCrypt;

import java.security.SecureRandom;

/**
 * Password hashing with bcrypt (BouncyCastle's {@link OpenBSDBCrypt}): salted and deliberately slow, so a
 * stolen snapshot or log does not give passwords away cheaply. Only the proposing leader hashes (with a salt
 * it draws), so the log carries the hash and apply stays deterministic; Authenticate verifies on the member
 * asked. Both run on the auth worker thread, never on an event loop or the Raft driver's thread.
 */
public final class Passwords {

    /** 2^10 rounds, etcd's default too: about 50-100 ms per hash on a server core — slow for a guesser, fine for a login. */
    public static final int DEFAULT_COST = 10;
    /** bcrypt's own bounds (etcd's --bcrypt-cost takes the same). */
    public static final int MIN_COST = 4;
    public static final int MAX_COST = 31;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** bcrypt checks run (tests: an unknown user's login costs one, as a known user's does). */
    static final java.util.concurrent.atomic.AtomicLong CHECKS = new java.util.concurrent.atomic.AtomicLong();

    private Passwords() {
    }

    /** A bcrypt hash ("$2y$10$...") of {@code password} with a fresh random salt, at the default cost. */
    public static String hash(String password) {
        return hash(password, DEFAULT_COST);
    }

    /** A bcrypt hash of {@code password} with a fresh random salt and 2^{@code cost} rounds (--bcrypt-cost). */
    public static String hash(String password, int cost) {
        checkCost(cost);
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return OpenBSDBCrypt.generate("2y", password.toCharArray(), salt, cost);
    }

    /** Refuses a cost outside bcrypt's bounds, naming the flag. */
    public static void checkCost(int cost) {
        if (cost < MIN_COST || cost > MAX_COST) {
            throw new IllegalArgumentException("--bcrypt-cost must be between " + MIN_COST + " and " + MAX_COST
                    + " (got " + cost + ")");
        }
    }

    /** Whether {@code hash} is a bcrypt hash of this cost ("$2y$10$..." has cost 10). */
    static boolean hasCost(String hash, int cost) {
        return hash.length() > 7 && hash.substring(4, 6).equals(String.format("%02d", cost));
    }

    /** Whether {@code password} matches {@code hash}; false for an empty or malformed hash. */
    public static boolean matches(String hash, String password) {
        if (hash.isEmpty()) {
            return false;
        }
        CHECKS.incrementAndGet();
        try {
            return OpenBSDBCrypt.checkPassword(hash, password.toCharArray());
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
