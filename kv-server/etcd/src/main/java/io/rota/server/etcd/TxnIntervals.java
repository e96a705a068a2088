package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.rota.etcd.api.DeleteRangeRequest;
import io.rota.etcd.api.RequestOp;
import io.rota.etcd.api.TxnRequest;
import io.rota.server.kv.KeyRange;

import java.util.ArrayList;
import java.util.List;

/**
 * The one rule of etcd's txn check that Rota's state machine does not take (design Y43): at etcd's door, a
 * put of a key that a delete of the same txn covers is etcd's duplicate-key error. etcd's gRPC layer checks
 * it before proposing (its {@code checkIntervals}), over every branch of every nested txn: a branch's puts,
 * nested ones included, against the deletes of its own level and of the nested txns before them. A key put
 * twice is the state machine's check, for both doors ({@code TxnTree}). Native clients keep Rota's older
 * rule, which lets a txn delete a range and put into it.
 */
final class TxnIntervals {

    /** What a branch writes: the keys it puts and the ranges it deletes, nested txns' included. */
    private record Writes(List<ByteString> puts, List<KeyRange> deletes) {
    }

    /**
     * etcd's check takes range_end as the literal end of an interval, so a "from key" delete (range_end
     * "\0") is an empty interval there and covers no put: the door lets it pass as etcd does.
     */
    private static final ByteString FROM_KEY = ByteString.copyFrom(new byte[] {0});

    private TxnIntervals() {
    }

    /** Refuses, with etcd's status and message, a put of a key a delete of the same txn covers. */
    static void check(TxnRequest t) {
        writes(t.getSuccessList());
        writes(t.getFailureList());
    }

    private static Writes writes(List<RequestOp> ops) {
        List<KeyRange> deletes = new ArrayList<>();
        for (RequestOp op : ops) {
            if (op.hasRequestDeleteRange() && !op.getRequestDeleteRange().getRangeEnd().equals(FROM_KEY)) {
                DeleteRangeRequest d = op.getRequestDeleteRange();
                deletes.add(new KeyRange(d.getKey(), d.getRangeEnd()));
            }
        }
        List<ByteString> puts = new ArrayList<>();
        for (RequestOp op : ops) {
            if (op.hasRequestTxn()) {
                Writes then = writes(op.getRequestTxn().getSuccessList());
                Writes orElse = writes(op.getRequestTxn().getFailureList());
                for (Writes branch : List.of(then, orElse)) {
                    branch.puts().forEach(k -> requireUncovered(deletes, k));
                    puts.addAll(branch.puts());
                }
                deletes.addAll(then.deletes());
                deletes.addAll(orElse.deletes());
            }
        }
        for (RequestOp op : ops) {
            if (op.hasRequestPut()) {
                requireUncovered(deletes, op.getRequestPut().getKey());
                puts.add(op.getRequestPut().getKey());
            }
        }
        return new Writes(puts, deletes);
    }

    private static void requireUncovered(List<KeyRange> deletes, ByteString key) {
        for (KeyRange d : deletes) {
            if (d.contains(key)) {
                throw EtcdErrors.invalid(EtcdErrors.DUPLICATE_KEY);
            }
        }
    }
}
