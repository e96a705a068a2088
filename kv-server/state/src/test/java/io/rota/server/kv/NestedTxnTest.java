package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's nested Txn (RequestOp.request_txn, etcd 3.3+; design Y40-Y42): one command, one revision, every
 * compare of the tree on the state before the outer txn's writes, duplicate puts refused over the whole tree.
 */
class NestedTxnTest {

    private final Harness h = new Harness();

    private static RequestOp put(String k, String v) {
        return RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b(k)).setValue(b(v))).build();
    }

    private static RequestOp get(String k) {
        return RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b(k))).build();
    }

    private static RequestOp del(String k) {
        return RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(b(k))).build();
    }

    private static RequestOp nested(TxnRequest.Builder t) {
        return RequestOp.newBuilder().setRequestTxn(t).build();
    }

    /** version(k) == v: 0 means the key is missing. */
    private static Compare version(String k, long v) {
        return Compare.newBuilder().setKey(b(k)).setTarget(Compare.Target.VERSION)
                .setResult(Compare.Result.EQUAL).setVersion(v).build();
    }

    private CommandResult txn(Harness on, TxnRequest.Builder t) {
        return on.run(Command.newBuilder().setTxn(t));
    }

    @Test
    void nestedPutRangeAndDeleteOnBothBranchesAtOneRevision() {
        h.put("old", "x");                                              // rev 2
        List<Event> seen = new ArrayList<>();
        List<Long> revisions = new ArrayList<>();
        h.sm.setListener((rev, events) -> {
            revisions.add(rev);
            seen.addAll(events);
        });
        TxnResponse r = txn(h, TxnRequest.newBuilder().addCompare(version("old", 1))
                .addSuccess(put("a", "1"))
                .addSuccess(nested(TxnRequest.newBuilder().addCompare(version("old", 1))
                        .addSuccess(get("a")).addSuccess(put("b", "2")).addSuccess(del("old"))
                        .addFailure(put("never1", "n"))))
                .addSuccess(nested(TxnRequest.newBuilder().addCompare(version("old", 7))
                        .addSuccess(put("never2", "n"))
                        .addFailure(put("c", "3")).addFailure(get("old"))))
                .addFailure(put("never3", "n"))).getTxn();

        assertTrue(r.getSucceeded(), r::toString);
        assertEquals(3, r.getResponsesCount());
        TxnResponse then = r.getResponses(1).getResponseTxn();
        assertTrue(then.getSucceeded());
        assertEquals("1", then.getResponses(0).getResponseRange().getKvs(0).getValue().toStringUtf8(),
                "a nested op sees the outer txn's earlier writes");
        assertEquals(1, then.getResponses(2).getResponseDeleteRange().getDeleted());
        TxnResponse orElse = r.getResponses(2).getResponseTxn();
        assertFalse(orElse.getSucceeded());
        assertEquals(2, orElse.getResponsesCount());
        assertEquals(0, orElse.getResponses(1).getResponseRange().getKvsCount(), "deleted by the txn before");

        assertEquals(3, h.sm.revision(), "one revision for every write of the tree");
        for (String k : List.of("a", "b", "c")) {
            assertEquals(3, h.get(k).getModRevision(), k);
        }
        assertNull(h.get("old"));
        assertEquals(0, h.sm.range(RangeRequest.newBuilder().setKey(b("never")).setRangeEnd(b("nevez")).build())
                .getCount());
        assertEquals(List.of(3L), revisions, "watchers get the tree's events once, at its revision");
        assertEquals(4, seen.size());
        assertEquals(3, r.getHeader().getRevision());
        assertEquals(3, then.getHeader().getRevision());
        assertEquals(3, then.getResponses(1).getResponsePut().getHeader().getRevision());
    }

    /** etcd evaluates every compare of the tree on one read view, before the outer txn writes (compareToPath). */
    @Test
    void nestedComparesSeeTheStateBeforeTheOuterTxnsWrites() {
        TxnResponse r = txn(h, TxnRequest.newBuilder()
                .addSuccess(put("k", "1"))
                .addSuccess(nested(TxnRequest.newBuilder().addCompare(version("k", 0))
                        .addSuccess(put("k-was-missing", "y")).addFailure(put("k-was-there", "y"))))).getTxn();
        assertTrue(r.getResponses(1).getResponseTxn().getSucceeded());
        assertEquals("y", h.get("k-was-missing").getValue().toStringUtf8());
        assertNull(h.get("k-was-there"));
    }

    @Test
    void aFailingNestedOpUndoesTheWholeTree() {
        h.put("a", "old");                                              // rev 2
        CommandResult r = txn(h, TxnRequest.newBuilder().addSuccess(put("a", "new"))
                .addSuccess(nested(TxnRequest.newBuilder().addSuccess(put("b", "1"))
                        .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                                .setKey(b("c")).setLease(999)).build()))));
        assertError(Error.Code.LEASE_NOT_FOUND, r);
        assertEquals(2, h.sm.revision());
        assertEquals("old", h.get("a").getValue().toStringUtf8());
        assertNull(h.get("b"));
    }

    /** etcd's checkIntervals: over every branch of the tree, whichever runs; a txn's two branches excepted. */
    @Test
    void aKeyPutTwiceAnywhereInTheTreeIsADuplicate() {
        TxnRequest.Builder notTaken = TxnRequest.newBuilder().addCompare(version("x", 5)).addSuccess(put("a", "2"));
        assertError(Error.Code.INVALID_ARGUMENT, txn(h, TxnRequest.newBuilder()
                .addSuccess(put("a", "1")).addSuccess(nested(notTaken))));
        assertError(Error.Code.INVALID_ARGUMENT, txn(h, TxnRequest.newBuilder()
                .addSuccess(nested(TxnRequest.newBuilder().addFailure(put("a", "1"))))
                .addSuccess(nested(TxnRequest.newBuilder().addSuccess(put("a", "2"))))));
        assertError(Error.Code.INVALID_ARGUMENT, txn(h, TxnRequest.newBuilder()
                .addFailure(nested(TxnRequest.newBuilder().addSuccess(nested(TxnRequest.newBuilder()
                        .addSuccess(put("a", "1")).addSuccess(put("a", "2"))))))));
        CommandResult r = txn(h, TxnRequest.newBuilder().addSuccess(nested(TxnRequest.newBuilder()
                .addCompare(version("x", 0)).addSuccess(put("a", "then")).addFailure(put("a", "else"))))
                .addFailure(put("a", "outer else")));
        assertFalse(r.hasError(), r::toString);
        assertEquals("then", h.get("a").getValue().toStringUtf8());
        assertEquals("duplicate key given in txn request", txn(h, TxnRequest.newBuilder()
                .addSuccess(put("a", "1")).addSuccess(nested(notTaken))).getError().getMessage());
    }

    @Test
    void depthIsLimitedTo32Levels() {
        Harness deep = new Harness(Harness.LIMITS.toBuilder().maxTxnOps(128).build());
        deep.put("k", "v");                                             // rev 2
        assertFalse(txn(deep, deepest(Limits.MAX_TXN_DEPTH)).hasError());
        CommandResult tooDeep = txn(deep, deepest(Limits.MAX_TXN_DEPTH + 1));
        assertError(Error.Code.INVALID_ARGUMENT, tooDeep);
        assertTrue(tooDeep.getError().getMessage().contains("deeper than 32 levels"), tooDeep::toString);
        assertEquals(3, deep.sm.revision());
    }

    /** The deepest answer is remembered for retries, so it must survive a snapshot (protobuf's depth limit). */
    @Test
    void theDeepestAnswerSurvivesASnapshot() {
        Harness deep = new Harness(Harness.LIMITS.toBuilder().maxTxnOps(128).build());
        deep.put("k", "v");
        long client = deep.register();
        Command.Builder cmd = Command.newBuilder().setTxn(deepest(Limits.MAX_TXN_DEPTH))
                .setSession(deep.ref(client, 1));
        CommandResult first = deep.run(cmd.clone());
        assertFalse(first.hasError(), first::toString);
        Harness restored = new Harness(Harness.LIMITS.toBuilder().maxTxnOps(128).build());
        restored.sm.restore(deep.sm.capture().serialize());
        restored.index = deep.index;
        restored.nowMs = deep.nowMs;
        assertEquals(first, restored.run(cmd.clone()), "the retry is answered from the restored memory");
    }

    /** {@code levels} txns, each the only op of the one around it; the innermost reads k and puts "deep". */
    private static TxnRequest.Builder deepest(int levels) {
        TxnRequest.Builder t = TxnRequest.newBuilder().addSuccess(get("k")).addSuccess(put("deep", "y"));
        for (int i = 1; i < levels; i++) {
            t = TxnRequest.newBuilder().addSuccess(nested(t));
        }
        return t;
    }

    @Test
    void theOpLimitCountsEveryLevel() {
        TxnRequest.Builder inner = TxnRequest.newBuilder();
        for (int i = 0; i < Harness.LIMITS.maxTxnOps() - 1; i++) {
            inner.addSuccess(get("k" + i));
        }
        assertError(Error.Code.REQUEST_TOO_LARGE, txn(h, TxnRequest.newBuilder().addSuccess(nested(inner))
                .addSuccess(get("one more"))));
    }
}
