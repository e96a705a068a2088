package io.rota.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed tokens: {@code v2.<user, base64url>.<auth revision>.<expiry, Unix ms>.<HMAC-SHA256, base64url>}, keyed
 * by the replicated token key (chosen by the leader that proposed AuthEnable, or a new one after a restore) and
 * bound to the cluster: the MAC covers the cluster id as well as the body, so a token of one cluster is no token
 * of another, even of one restored from the same backup (issue 33). Every member holds the key, so a token from
 * one member is valid on all of them — a forwarded request and a client that fails over keep their token — until
 * it expires ({@code --auth-token-ttl}) or the auth revision changes (any user or role change), which is how a
 * permission change reaches tokens already handed out.
 */
final class Tokens {

    private static final String VERSION = "v2";
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private Tokens() {
    }

    /** A parsed token whose signature was checked: who, at which auth revision, valid until when. */
    record Claim(String user, long revision, long expiresAtMs) {
    }

    static String sign(byte[] key, String clusterId, String user, long revision, long expiresAtMs) {
        String body = VERSION + "." + ENCODER.encodeToString(user.getBytes(StandardCharsets.UTF_8)) + "." + revision
                + "." + expiresAtMs;
        return body + "." + ENCODER.encodeToString(mac(key, clusterId, body));
    }

    /** The claim of a well-formed token signed with {@code key} for {@code clusterId}, or null. */
    static Claim verify(byte[] key, String clusterId, String token) {
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
        if (!MessageDigest.isEqual(signature, mac(key, clusterId, body))) {
            return null;
        }
        String[] parts = body.split("\\.");
        if (parts.length != 4) {
            return null;
        }
        try {
            return new Claim(new String(DECODER.decode(parts[1]), StandardCharsets.UTF_8), Long.parseLong(parts[2]),
                    Long.parseLong(parts[3]));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static byte[] mac(byte[] key, String clusterId, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            // The cluster id first, then a separator no id contains: "a" + "b.c" never MACs like "ab" + ".c".
            mac.update(clusterId.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) '\n');
            return mac.doFinal(body.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }
}
