package io.rota.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed tokens: {@code v1.<user, base64url>.<auth revision>.<HMAC-SHA256, base64url>}, keyed by the
 * replicated token key (chosen by the leader that proposed AuthEnable). Every member holds the key, so a
 * token from one member is valid on all of them — a forwarded request and a client that fails over to
 * another member keep their token — until the auth revision changes (any user or role change), which is
 * how a permission change reaches tokens already handed out.
 */
final class Tokens {

    private static final String VERSION = "v1";
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private Tokens() {
    }

    /** A parsed token: who and at which auth revision (the signature was checked). */
    record Claim(String user, long revision) {
    }

    static String sign(byte[] key, String user, long revision) {
        String body = VERSION + "." + ENCODER.encodeToString(user.getBytes(StandardCharsets.UTF_8)) + "." + revision;
        return body + "." + ENCODER.encodeToString(mac(key, body));
    }

    /** The claim of a well-formed token signed with {@code key}, or null. */
    static Claim verify(byte[] key, String token) {
        int last = token.lastIndexOf('.');
        if (key.length == 0 || last < 0 || !token.startsWith(VERSION + ".")) {
            return null;
        }
        String body = token.substring(0, last);
        byte[] signature;
        try {
            signature = DECODER.decode(token.substring(last + 1));
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (!MessageDigest.isEqual(signature, mac(key, body))) {
            return null;
        }
        String[] parts = body.split("\\.");
        if (parts.length != 3) {
            return null;
        }
        try {
            return new Claim(new String(DECODER.decode(parts[1]), StandardCharsets.UTF_8), Long.parseLong(parts[2]));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static byte[] mac(byte[] key, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(body.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }
}
