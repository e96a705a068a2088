package io.rota.server.auth;

import org.bouncycastle.crypto.generators.OpenBSDBCrypt;

import java.security.SecureRandom;

/**
 * Password hashing with bcrypt (BouncyCastle's {@link OpenBSDBCrypt}): salted and deliberately slow, so a
 * stolen snapshot or log does not give passwords away cheaply. Only the proposing leader hashes (with a salt
 * it draws), so the log carries the hash and apply stays deterministic; Authenticate verifies on the member
 * asked. Both run on the auth worker thread, never on an event loop or the Raft driver's thread.
 */
public final class Passwords {

    /** 2^10 rounds: about 50-100 ms per hash on a server core — slow for a guesser, fine for a login. */
    static final int COST = 10;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Passwords() {
    }

    /** A bcrypt hash ("$2y$10$...") of {@code password} with a fresh random salt. */
    public static String hash(String password) {
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return OpenBSDBCrypt.generate("2y", password.toCharArray(), salt, COST);
    }

    /** Whether {@code password} matches {@code hash}; false for an empty or malformed hash. */
    public static boolean matches(String hash, String password) {
        if (hash.isEmpty()) {
            return false;
        }
        try {
            return OpenBSDBCrypt.checkPassword(hash, password.toCharArray());
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
