package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** etcd's Txn: compares on every target with every operator; atomic; one revision for all writes. */
class TxnTest {

    private final Harness h = new Harness();

    private static RequestOp put(String k, String v) {
        return RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b(k)).setValue(b(v))).build();
    }

    private static RequestOp putWithLease(String k, long lease) {
        return RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b(k)).setLease(lease)).build();
    }

    private static RequestOp get(String k) {
        return RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b(k))).build();
    }

    private static RequestOp del(String k) {
        return RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(b(k))).build();
    }

    private CommandResult txn(TxnRequest.Builder t) {
        return h.run(Command.newBuilder().setTxn(t));
    }

    /**
     * Each case: target, operator, the operand relative to the key's field (-1 below, 0 equal, +1 above),
     * and whether the compare holds.
     */
    static Stream<Arguments> compares() {
        List<Arguments> cases = new ArrayList<>();
        for (Compare.Target target : List.of(Compare.Target.VERSION, Compare.Target.CREATE, Compare.Target.MOD,
                Compare.Target.VALUE, Compare.Target.LEASE)) {
            for (int delta : new int[] {-1, 0, 1}) {
                // The key's field compared with an operand that is delta above it: cmp = -delta.
                cases.add(Arguments.of(target, Compare.Result.EQUAL, delta, delta == 0));
                cases.add(Arguments.of(target, Compare.Result.NOT_EQUAL, delta, delta != 0));
                cases.add(Arguments.of(target, Compare.Result.GREATER, delta, delta < 0));
                cases.add(Arguments.of(target, Compare.Result.LESS, delta, delta > 0));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} field{2} -> {3}")
    @MethodSource("compares")
    void compareEachTargetWithEachOperator(Compare.Target target, Compare.Result result, int delta, boolean expected) {
        h.put("k", "a");
        long lease = h.grant(60);
        h.put("k", "m", lease);              // "k": value "m", version 2, create 2, mod 3, lease set
        var kv = h.get("k");
        Compare.Builder c = Compare.newBuilder().setKey(b("k")).setTarget(target).setResult(result);
        switch (target) {
            case VERSION -> c.setVersion(kv.getVersion() + delta);
            case CREATE -> c.setCreateRevision(kv.getCreateRevision() + delta);
            case MOD -> c.setModRevision(kv.getModRevision() + delta);
            case VALUE -> c.setValue(b(delta < 0 ? "l" : delta == 0 ? "m" : "n"));
            case LEASE -> c.setLease(kv.getLease() + delta);
            default -> throw new AssertionError(target);
        }
        TxnResponse r = txn(TxnRequest.newBuilder().addCompare(c).addSuccess(put("won", "y")).addFailure(put("lost", "n")))
                .getTxn();
        assertEquals(expected, r.getSucceeded());
        assertEquals(expected ? "won" : "lost", Harness.s(h.sm.range(RangeRequest.newBuilder()
                .setKey(b("lost")).setRangeEnd(b("wop")).build()).getKvs(0).getKey()));
    }

    @Test
    void missingKeyComparesAsZeroButValueIsFalse() {
        Compare created = Compare.newBuilder().setKey(b("lock")).setTarget(Compare.Target.CREATE)
                .setResult(Compare.Result.EQUAL).setCreateRevision(0).build();
        assertTrue(txn(TxnRequest.newBuilder().addCompare(created)).getTxn().getSucceeded());
        Compare value = Compare.newBuilder().setKey(b("lock")).setTarget(Compare.Target.VALUE)
                .setResult(Compare.Result.NOT_EQUAL).setValue(b("x")).build();
        assertFalse(txn(TxnRequest.newBuilder().addCompare(value)).getTxn().getSucceeded());
    }

    @Test
    void rangeCompareMustHoldForEveryKey() {
        h.put("p/1", "a");
        h.put("p/2", "b");
        Compare.Builder c = Compare.newBuilder().setKey(b("p/")).setRangeEnd(b("p0"))
                .setTarget(Compare.Target.VERSION).setResult(Compare.Result.EQUAL).setVersion(1);
        assertTrue(txn(TxnRequest.newBuilder().addCompare(c)).getTxn().getSucceeded());
        h.put("p/2", "c");
        assertFalse(txn(TxnRequest.newBuilder().addCompare(c)).getTxn().getSucceeded());
    }

    @Test
    void allWritesOfATxnShareOneRevisionAndLaterOpsSeeEarlierOnes() {
        h.put("gone", "x");                                       // rev 2
        TxnResponse r = txn(TxnRequest.newBuilder()
                .addSuccess(put("a", "1")).addSuccess(put("b", "2")).addSuccess(del("gone")).addSuccess(get("a")))
                .getTxn();
        assertTrue(r.getSucceeded());
        assertEquals(3, r.getHeader().getRevision());
        assertEquals(3, h.sm.revision());
        assertEquals(3, h.get("a").getModRevision());
        assertEquals(3, h.get("b").getModRevision());
        assertNull(h.get("gone"));
        assertEquals("1", r.getResponses(3).getResponseRange().getKvs(0).getValue().toStringUtf8());
        assertEquals(3, r.getResponses(0).getResponsePut().getHeader().getRevision());
    }

    @Test
    void readOnlyTxnWritesNoRevision() {
        h.put("a", "1");
        TxnResponse r = txn(TxnRequest.newBuilder().addSuccess(get("a")).addSuccess(del("nothing"))).getTxn();
        assertEquals(2, r.getHeader().getRevision());
        assertEquals(2, h.sm.revision());
    }

    @Test
    void aFailingOpUndoesTheWholeTxn() {
        h.put("a", "old");                                        // rev 2
        List<io.rota.proto.Event> seen = new ArrayList<>();
        h.sm.setListener((rev, events) -> seen.addAll(events));
        CommandResult r = txn(TxnRequest.newBuilder()
                .addSuccess(put("a", "new")).addSuccess(del("a")).addSuccess(put("b", "1"))
                .addSuccess(putWithLease("c", 999)));
        assertError(Error.Code.LEASE_NOT_FOUND, r);
        assertEquals(2, h.sm.revision());
        assertEquals("old", h.get("a").getValue().toStringUtf8());
        assertEquals(1, h.get("a").getVersion());
        assertNull(h.get("b"));
        assertTrue(seen.isEmpty());
        assertTrue(h.sm.history(3).events().isEmpty());
    }

    @Test
    void pastRevisionReadInsideATxnUndoesItsOwnWrites() {
        h.put("a", "1");                                          // rev 2
        TxnResponse r = txn(TxnRequest.newBuilder().addSuccess(put("a", "2")).addSuccess(RequestOp.newBuilder()
                .setRequestRange(RangeRequest.newBuilder().setKey(b("a")).setRevision(2)).build())).getTxn();
        assertEquals("1", r.getResponses(1).getResponseRange().getKvs(0).getValue().toStringUtf8());
    }

    /** etcd's min/max mod/create revision filters, on a range in a txn as on a plain one (design Y44). */
    @Test
    void revisionFiltersApplyToARangeInsideATxn() {
        h.put("f/a", "1");                                        // rev 2
        h.put("f/b", "1");                                        // rev 3
        h.put("f/a", "2");                                        // rev 4: a created 2, modified 4
        RangeRequest.Builder all = RangeRequest.newBuilder().setKey(b("f/")).setRangeEnd(b("f0"));
        TxnResponse r = txn(TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestRange(all.clone().setMinCreateRevision(3)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(all.clone().setMaxModRevision(3).setLimit(1)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(all.clone().setMinModRevision(4)
                        .setMaxCreateRevision(2)))).getTxn();
        assertEquals(List.of("f/b"), keys(r.getResponses(0).getResponseRange()));
        assertEquals(List.of("f/b"), keys(r.getResponses(1).getResponseRange()));
        assertFalse(r.getResponses(1).getResponseRange().getMore(), "the limit applies after the filters");
        assertEquals(2, r.getResponses(1).getResponseRange().getCount(), "count stays the range's size");
        assertEquals(List.of("f/a"), keys(r.getResponses(2).getResponseRange()));
    }

    private static List<String> keys(io.rota.proto.RangeResponse r) {
        return r.getKvsList().stream().map(kv -> kv.getKey().toStringUtf8()).toList();
    }

    @Test
    void duplicatePutsAndOversizedTxnsAreRefused() {
        assertError(Error.Code.INVALID_ARGUMENT, txn(TxnRequest.newBuilder().addSuccess(put("a", "1")).addSuccess(put("a", "2"))));
        TxnRequest.Builder big = TxnRequest.newBuilder();
        for (int i = 0; i < Harness.LIMITS.maxTxnOps() + 1; i++) {
            big.addSuccess(put("k" + i, "v"));
        }
        assertError(Error.Code.REQUEST_TOO_LARGE, txn(big));
        assertError(Error.Code.INVALID_ARGUMENT, txn(TxnRequest.newBuilder().addSuccess(RequestOp.getDefaultInstance())));
        assertEquals(1, h.sm.revision());
    }
}
