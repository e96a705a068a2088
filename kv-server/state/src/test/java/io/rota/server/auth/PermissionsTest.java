package io.rota.server.auth;

import com.google.protobuf.ByteString;
import io.rota.proto.Permission;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The permission checker's key, range and prefix rules (etcd's: one merged grant must cover the whole request). */
class PermissionsTest {

    private static final ByteString EMPTY = ByteString.EMPTY;
    private static final ByteString ZERO = ByteString.copyFrom(new byte[] {0});

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static Permission perm(Permission.Type type, String key, ByteString end) {
        return Permission.newBuilder().setPermType(type).setKey(b(key)).setRangeEnd(end).build();
    }

    private static Permission prefix(Permission.Type type, String p) {
        return perm(type, p, b(p.substring(0, p.length() - 1) + (char) (p.charAt(p.length() - 1) + 1)));
    }

    @Test
    @DisplayName("a prefix grant covers its keys and sub-ranges, not the prefix's neighbours or a wider range")
    void prefixGrant() {
        Permissions p = Permissions.of(List.of(prefix(Permission.Type.READ, "app-a/")));
        assertTrue(p.canRead(b("app-a/x"), EMPTY));
        assertTrue(p.canRead(b("app-a/"), EMPTY), "the prefix itself is a key under it");
        assertTrue(p.canRead(b("app-a/"), b("app-a0")), "the whole prefix as a range");
        assertTrue(p.canRead(b("app-a/m"), b("app-a/n")));
        assertFalse(p.canRead(b("app-a"), EMPTY), "the prefix without its slash is another key");
        assertFalse(p.canRead(b("app-a0"), EMPTY), "the range end is exclusive");
        assertFalse(p.canRead(b("app-a/"), b("app-a1")), "a range reaching past the prefix");
        assertFalse(p.canRead(b("app-a/"), ZERO), "every key from the prefix on");
        assertFalse(p.canRead(ZERO, ZERO), "all keys");
        assertFalse(p.canWrite(b("app-a/x"), EMPTY), "READ grants no write");
    }

    @Test
    @DisplayName("a single-key grant covers that key only; READWRITE counts for both")
    void singleKey() {
        Permissions p = Permissions.of(List.of(perm(Permission.Type.READWRITE, "cfg", EMPTY)));
        assertTrue(p.canRead(b("cfg"), EMPTY));
        assertTrue(p.canWrite(b("cfg"), EMPTY));
        assertFalse(p.canRead(b("cfg0"), EMPTY));
        assertFalse(p.canRead(b("cfg"), b("cfh")), "a range holding more keys than the one granted");
        assertTrue(p.canRead(b("cfg"), b("cfg\0")), "the range holding exactly that key");
    }

    @Test
    @DisplayName("touching and overlapping grants merge; a gap between grants refuses a range across it")
    void merging() {
        Permissions p = Permissions.of(List.of(perm(Permission.Type.WRITE, "a", b("c")),
                perm(Permission.Type.WRITE, "c", b("e")), perm(Permission.Type.WRITE, "g", b("h"))));
        assertTrue(p.canWrite(b("a"), b("e")), "[a,c) and [c,e) touch");
        assertTrue(p.canWrite(b("b"), b("d")));
        assertFalse(p.canWrite(b("d"), b("h")), "[e,g) is not granted");
        assertFalse(p.canRead(b("a"), EMPTY), "WRITE grants no read");
    }

    @Test
    @DisplayName("an open-ended grant (range_end \\0) covers every key from its start; an empty request range is allowed")
    void openEnded() {
        Permissions p = Permissions.of(List.of(perm(Permission.Type.READ, "m", ZERO)));
        assertTrue(p.canRead(b("zzz"), EMPTY));
        assertTrue(p.canRead(b("m"), ZERO));
        assertFalse(p.canRead(b("l"), EMPTY));
        assertTrue(p.canRead(b("b"), b("a")), "an end before the start addresses no key");
        assertTrue(Permissions.ALL.canWrite(ZERO, ZERO));
        assertFalse(Permissions.NONE.canRead(b("x"), EMPTY));
    }
}
