package io.rota.server.auth;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCreateRequest;

import java.util.List;

/**
 * The authorization rule as pure functions of the applied {@link AuthState} (issue 33): whether a user may make a
 * request at the door, have a command applied, or revoke a lease. The door (the member runtime's {@code AuthGate})
 * and apply ({@code CoordinationStateMachine}) call the same code, so every replica judges a command alike.
 * Deterministic: reads only the state and its permission cache. Moved out of {@code AuthGate} (issue 34, design
 * HS13) so the state module needs nothing of the member runtime.
 */
public final class Authorization {

    private Authorization() {
    }

    /** Why {@code user} may not make this request, or null if it may. */
    public static String refusal(AuthState s, String user, Frame frame) {
        if (s.isRoot(user)) {
            return null;
        }
        Permissions p = s.permissions(user);
        return switch (frame.getBodyCase()) {
            case RANGE_REQUEST -> read(p, frame.getRangeRequest());
            case PUT_REQUEST -> put(p, frame.getPutRequest());
            case DELETE_RANGE_REQUEST -> delete(p, frame.getDeleteRangeRequest());
            case TXN_REQUEST -> txn(p, frame.getTxnRequest());
            case WATCH_REQUEST -> frame.getWatchRequest().hasCreateRequest()
                    ? watch(p, frame.getWatchRequest().getCreateRequest()) : null;
            // Leases and sessions belong to no key: any user may hold them; their owners are checked at apply
            // (writes) and by the state machine's reads (issue 33).
            case LEASE_GRANT_REQUEST, LEASE_REVOKE_REQUEST, LEASE_KEEP_ALIVE_REQUEST, LEASE_TIME_TO_LIVE_REQUEST,
                 LEASE_LEASES_REQUEST, REGISTER_SESSION_REQUEST, SESSION_KEEP_ALIVE_REQUEST, STATUS_REQUEST -> null;
            case AUTH_REQUEST -> frame.getAuthRequest().hasAuthenticate() ? null
                    : "is not root: auth administration needs the root role";
            default -> "is not root: " + frame.getBodyCase() + " (membership and maintenance) needs the root role";
        };
    }

    /**
     * Why {@code user} may not have {@code cmd} applied, or null if it may: the door's rule ({@link #refusal(AuthState,
     * String, Frame)}) for a replicated command, so apply judges a request by the same code the door did, on the
     * applied auth state (issue 33). Keys of puts, deletes and transactions (every compare and op of both
     * branches) need the user's permissions; leases and sessions belong to no key (their owners are the state
     * machine's to check); everything else a client can send — membership, alarms, compaction, auth changes —
     * needs the root role. Deterministic: reads only {@code s} and its permission cache.
     */
    public static String refusal(AuthState s, String user, Command cmd) {
        if (s.isRoot(user)) {
            return null;
        }
        Permissions p = s.permissions(user);
        return switch (cmd.getOpCase()) {
            case PUT -> put(p, cmd.getPut());
            case DELETE_RANGE -> delete(p, cmd.getDeleteRange());
            case TXN -> txn(p, cmd.getTxn());
            case LEASE_GRANT, LEASE_REVOKE, LEASE_KEEP_ALIVE, REGISTER_SESSION, SESSION_KEEP_ALIVE, OP_NOT_SET -> null;
            default -> "is not root: " + cmd.getOpCase() + " (membership, maintenance, auth administration and the"
                    + " members' own commands) needs the root role";
        };
    }

    private static String read(Permissions p, RangeRequest r) {
        return p.canRead(r.getKey(), r.getRangeEnd()) ? null : "may not read " + range(r.getKey(), r.getRangeEnd());
    }

    private static String put(Permissions p, PutRequest r) {
        if (!p.canWrite(r.getKey(), ByteString.EMPTY)) {
            return "may not write " + range(r.getKey(), ByteString.EMPTY);
        }
        // prev_kv returns the old value: a read.
        return r.getPrevKv() && !p.canRead(r.getKey(), ByteString.EMPTY)
                ? "may not read " + range(r.getKey(), ByteString.EMPTY) + " (asked for prev_kv)" : null;
    }

    private static String delete(Permissions p, DeleteRangeRequest r) {
        if (!p.canWrite(r.getKey(), r.getRangeEnd())) {
            return "may not write " + range(r.getKey(), r.getRangeEnd());
        }
        return r.getPrevKv() && !p.canRead(r.getKey(), r.getRangeEnd())
                ? "may not read " + range(r.getKey(), r.getRangeEnd()) + " (asked for prev_kv)" : null;
    }

    /**
     * Every compare (a read) and every op of both branches, nested txns' too: as etcd's auth check, the
     * whole request is authorised before it is known which branches will run. A nested txn's depth was
     * bounded by the frame's parse (protobuf's recursion limit), so the recursion is shallow.
     */
    private static String txn(Permissions p, TxnRequest t) {
        for (Compare c : t.getCompareList()) {
            if (!p.canRead(c.getKey(), c.getRangeEnd())) {
                return "may not read " + range(c.getKey(), c.getRangeEnd()) + " (a compare of the transaction)";
            }
        }
        String refusal = ops(p, t.getSuccessList());
        return refusal != null ? refusal : ops(p, t.getFailureList());
    }

    private static String ops(Permissions p, List<RequestOp> ops) {
        for (RequestOp op : ops) {
            String refusal = switch (op.getRequestCase()) {
                case REQUEST_RANGE -> read(p, op.getRequestRange());
                case REQUEST_PUT -> put(p, op.getRequestPut());
                case REQUEST_DELETE_RANGE -> delete(p, op.getRequestDeleteRange());
                case REQUEST_TXN -> txn(p, op.getRequestTxn());
                case REQUEST_NOT_SET -> null;
            };
            if (refusal != null) {
                return op.hasRequestTxn() ? refusal : refusal + " (an op of the transaction)";
            }
        }
        return null;
    }

    private static String watch(Permissions p, WatchCreateRequest w) {
        return p.canRead(w.getKey(), w.getRangeEnd()) ? null : "may not read (so not watch) " + range(w.getKey(), w.getRangeEnd());
    }

    /**
     * Why {@code user} may not revoke lease {@code leaseId} holding {@code keys}, or null: revoking deletes them,
     * so it must be allowed to write every one. The door's rule and apply's (issue 33), on the state each has.
     */
    public static String revokeRefusal(AuthState s, String user, long leaseId, List<ByteString> keys) {
        if (s.isRoot(user)) {
            return null;
        }
        Permissions p = s.permissions(user);
        for (ByteString key : keys) {
            if (!p.canWrite(key, ByteString.EMPTY)) {
                return "may not revoke lease " + leaseId + ": it holds " + range(key, ByteString.EMPTY)
                        + ", which the user may not write";
            }
        }
        return null;
    }

    /** How a refusal names a key or a range. */
    public static String range(ByteString key, ByteString end) {
        String k = key.toStringUtf8();
        if (end.isEmpty()) {
            return "key '" + k + "'";
        }
        return "range ['" + k + "', '" + (end.equals(ByteString.copyFrom(new byte[] {0})) ? "\\0" : end.toStringUtf8()) + "')";
    }
}
