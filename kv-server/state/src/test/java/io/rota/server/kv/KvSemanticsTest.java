package io.rota.server.kv;

import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.KeyValue;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** etcd's key model: one revision per write, create/mod revision and version per key, Range options. */
class KvSemanticsTest {

    private final Harness h = new Harness();

    private List<String> keys(RangeResponse r) {
        return r.getKvsList().stream().map(kv -> Harness.s(kv.getKey())).toList();
    }

    private RangeResponse range(RangeRequest.Builder req) {
        return h.sm.range(req.build());
    }

    @Test
    void revisionStartsAtOneAndEveryPutAdvancesIt() {
        assertEquals(1, h.sm.revision());
        assertEquals(2, h.put("a", "1").getPut().getHeader().getRevision());
        h.put("a", "1");   // a put that changes nothing still writes a revision (etcd)
        assertEquals(3, h.sm.revision());
    }

    @Test
    void versionCreateAndModRevisionFollowEtcd() {
        h.put("k", "v1");
        h.put("other", "x");
        h.put("k", "v2");
        KeyValue kv = h.get("k");
        assertEquals(2, kv.getCreateRevision());
        assertEquals(4, kv.getModRevision());
        assertEquals(2, kv.getVersion());

        CommandResult del = h.delete("k", "");
        assertEquals(1, del.getDeleteRange().getDeleted());
        assertEquals("v2", del.getDeleteRange().getPrevKvs(0).getValue().toStringUtf8());
        assertEquals(5, h.sm.revision());
        assertNull(h.get("k"));

        h.put("k", "again");   // re-created: version and create revision start over
        kv = h.get("k");
        assertEquals(1, kv.getVersion());
        assertEquals(6, kv.getCreateRevision());
    }

    @Test
    void deletingNothingWritesNoRevision() {
        h.put("a", "1");
        CommandResult r = h.delete("zzz", "");
        assertEquals(0, r.getDeleteRange().getDeleted());
        assertEquals(2, r.getDeleteRange().getHeader().getRevision());
        assertEquals(2, h.sm.revision());
    }

    @Test
    void putReturnsPrevKvAndHonoursIgnoreValue() {
        h.put("k", "old");
        CommandResult r = h.run(io.rota.proto.Command.newBuilder().setPut(
                io.rota.proto.PutRequest.newBuilder().setKey(b("k")).setIgnoreValue(true).setPrevKv(true)));
        assertEquals("old", r.getPut().getPrevKv().getValue().toStringUtf8());
        assertEquals("old", h.get("k").getValue().toStringUtf8());
        assertEquals(2, h.get("k").getVersion());

        CommandResult missing = h.run(io.rota.proto.Command.newBuilder().setPut(
                io.rota.proto.PutRequest.newBuilder().setKey(b("nope")).setIgnoreValue(true)));
        assertError(Error.Code.INVALID_ARGUMENT, missing);
    }

    @Test
    void rangeByKeyIntervalPrefixAndAllAbove() {
        for (String k : List.of("a", "ab", "abc", "b", "b\u00ff", "c")) {
            h.put(k, "v-" + k);
        }
        assertEquals(List.of("ab"), keys(range(RangeRequest.newBuilder().setKey(b("ab")))));
        assertEquals(List.of("ab", "abc", "b"), keys(range(RangeRequest.newBuilder().setKey(b("ab")).setRangeEnd(b("b\u0001")))));
        // prefix "ab": range_end = "ac"
        assertEquals(List.of("ab", "abc"), keys(range(RangeRequest.newBuilder().setKey(b("ab")).setRangeEnd(b("ac")))));
        // range_end "\0": every key >= key; key "\0" too: all keys
        assertEquals(List.of("b", "b\u00ff", "c"), keys(range(RangeRequest.newBuilder().setKey(b("b")).setRangeEnd(b("\0")))));
        assertEquals(6, range(RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0"))).getCount());
        // end <= key: nothing
        assertEquals(0, range(RangeRequest.newBuilder().setKey(b("c")).setRangeEnd(b("a"))).getCount());
    }

    @Test
    void limitCountOnlyAndKeysOnly() {
        for (String k : List.of("p/1", "p/2", "p/3")) {
            h.put(k, "value");
        }
        RangeResponse limited = range(RangeRequest.newBuilder().setKey(b("p/")).setRangeEnd(b("p0")).setLimit(2));
        assertEquals(List.of("p/1", "p/2"), keys(limited));
        assertTrue(limited.getMore());
        assertEquals(3, limited.getCount());

        RangeResponse all = range(RangeRequest.newBuilder().setKey(b("p/")).setRangeEnd(b("p0")).setLimit(3));
        assertFalse(all.getMore());

        RangeResponse counted = range(RangeRequest.newBuilder().setKey(b("p/")).setRangeEnd(b("p0")).setCountOnly(true));
        assertEquals(0, counted.getKvsCount());
        assertEquals(3, counted.getCount());

        RangeResponse keysOnly = range(RangeRequest.newBuilder().setKey(b("p/")).setRangeEnd(b("p0")).setKeysOnly(true));
        assertEquals(3, keysOnly.getKvsCount());
        assertTrue(keysOnly.getKvs(0).getValue().isEmpty());
        assertEquals(1, keysOnly.getKvs(0).getVersion());
    }

    @Test
    void rangeAtAPastRevisionWithinTheHistory() {
        h.put("k", "v1");          // rev 2
        h.put("k", "v2");          // rev 3
        h.put("j", "x");           // rev 4
        h.delete("k", "");         // rev 5
        RangeRequest.Builder all = RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0"));
        assertEquals(List.of(), keys(range(all.clone().setRevision(1))));
        assertEquals("v1", range(all.clone().setRevision(2)).getKvs(0).getValue().toStringUtf8());
        assertEquals(List.of("j", "k"), keys(range(all.clone().setRevision(4))));
        assertEquals(2, range(all.clone().setRevision(4)).getKvs(1).getVersion());
        assertEquals(List.of("j"), keys(range(all.clone().setRevision(5))));
        StoreException future = assertThrows(StoreException.class, () -> range(all.clone().setRevision(6)));
        assertEquals(Error.Code.INVALID_ARGUMENT, future.error().getCode());
    }

    @Test
    void badInputIsATypedErrorNotACrash() {
        assertError(Error.Code.INVALID_ARGUMENT, h.put("", "v"));
        assertError(Error.Code.REQUEST_TOO_LARGE, h.put("k".repeat(65), "v"));
        assertError(Error.Code.REQUEST_TOO_LARGE, h.put("k", "v".repeat(257)));
        assertEquals(1, h.sm.revision());
        // A size refusal names the size, the limit, and why it is no flag.
        StoreException key = assertThrows(StoreException.class, () -> range(RangeRequest.newBuilder()
                .setKey(b("k".repeat(65)))));
        assertEquals("a key of 65 bytes is over the cluster's key limit of 64 bytes (64 bytes); the limit is the same on"
                + " every member, as the replicated state machine applies it, and is not a flag (docs/server.md, Limits)",
                key.error().getMessage());
        StoreException e = assertThrows(StoreException.class, () -> range(RangeRequest.newBuilder()));
        assertEquals(Error.Code.INVALID_ARGUMENT, e.error().getCode());
    }

    @Test
    void storeIsBoundedInKeys() {
        Harness small = new Harness(Harness.LIMITS.toBuilder().maxKeys(2).build());
        small.put("a", "1");
        small.put("b", "1");
        small.put("a", "2");    // replacing is fine
        CommandResult full = small.put("c", "1");
        assertError(Error.Code.UNAVAILABLE, full);
        assertEquals(StoreException.FULL_RETRY_AFTER_MS, full.getError().getRetryAfterMs(), "a typed retry-after");
    }

    @Test
    void rangeSortsOnTheServerBeforeTheLimitAsEtcdDoes() {
        h.put("a", "3");
        h.put("b", "1");
        h.put("c", "2");
        h.put("a", "3");   // a: version 2, mod revision 5
        RangeRequest.Builder all = RangeRequest.newBuilder().setKey(b("a")).setRangeEnd(b("z"));
        assertEquals(List.of("a", "b", "c"), keys(range(all.clone())));
        assertEquals(List.of("c", "b", "a"), keys(range(all.clone().setSortOrder(RangeRequest.SortOrder.DESCEND))));
        assertEquals(List.of("b", "c", "a"), keys(range(all.clone().setSortTarget(RangeRequest.SortTarget.VALUE))),
                "a target without an order is ascending (etcd)");
        assertEquals(List.of("a", "c"), keys(range(all.clone().setSortTarget(RangeRequest.SortTarget.MOD)
                .setSortOrder(RangeRequest.SortOrder.DESCEND).setLimit(2))), "the limit applies after the sort");
        assertEquals(List.of("a", "b", "c"), keys(range(all.clone().setSortTarget(RangeRequest.SortTarget.CREATE))));
        assertEquals(List.of("b", "c", "a"), keys(range(all.clone().setSortTarget(RangeRequest.SortTarget.VERSION)
                .setSortOrder(RangeRequest.SortOrder.ASCEND))), "version 1 before 2, ties in key order");
        RangeResponse limited = range(all.clone().setSortTarget(RangeRequest.SortTarget.VALUE)
                .setSortOrder(RangeRequest.SortOrder.DESCEND).setLimit(1));
        assertEquals(List.of("a"), keys(limited));
        assertTrue(limited.getMore());
        assertEquals(3, limited.getCount());
    }

    @Test
    void hashKvIsDeterministicPerRevisionAndSeesEveryField() {
        Harness other = new Harness();
        for (Harness x : List.of(h, other)) {
            x.put("a", "1");
            x.put("b", "2");
        }
        long atThree = h.sm.hashKv(io.rota.proto.HashKvRequest.newBuilder().setRevision(3).build()).getHash();
        assertEquals(atThree, other.sm.hashKv(io.rota.proto.HashKvRequest.getDefaultInstance()).getHash(),
                "two members with the same writes have the same hash");
        h.put("b", "2");   // same keys and values, but b's version and mod revision changed
        io.rota.proto.HashKvResponse now = h.sm.hashKv(io.rota.proto.HashKvRequest.getDefaultInstance());
        assertEquals(4, now.getHashRevision());
        assertTrue(now.getHash() != atThree, "a revision or version change changes the hash");
        assertEquals(atThree, h.sm.hashKv(io.rota.proto.HashKvRequest.newBuilder().setRevision(3).build()).getHash(),
                "the past revision is hashed from the history, as it was");
        StoreException future = assertThrows(StoreException.class,
                () -> h.sm.hashKv(io.rota.proto.HashKvRequest.newBuilder().setRevision(99).build()));
        assertTrue(future.getMessage().contains("future"), future.getMessage());
    }
}
