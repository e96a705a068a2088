package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.server.auth.AuthState;
import io.rota.server.auth.AuthStore;
import io.rota.server.auth.Authorization;
import io.rota.server.lease.Lease;
import io.rota.server.lease.LeaseTable;

import java.util.List;

/**
 * Authorization at apply (issue 33, as etcd's AuthInfo) and the leases a client's read may see, by the names of
 * callers: "anonymous" while auth is disabled (issue 31), "user:NAME" for an authenticated user, "" for the
 * members' internal commands. Deterministic: it reads the applied auth state and the applied leases and keys
 * only. Driver thread only.
 */
final class ApplyAuthorization {

    /** The caller of a request while auth is disabled (issue 31): one caller for every client. */
    static final String ANONYMOUS = "anonymous";
    private static final String USER_PREFIX = "user:";

    private final AuthStore auth;
    private final LeaseTable leases;
    private final KvStore store;

    ApplyAuthorization(AuthStore auth, LeaseTable leases, KvStore store) {
        this.auth = auth;
        this.leases = leases;
        this.store = store;
    }

    /** The caller a request of {@code user} is applied as (null: auth disabled, anonymous). */
    static String caller(String user) {
        return user == null ? ANONYMOUS : USER_PREFIX + user;
    }

    /** The user {@code caller} names, or null for "anonymous", an internal command or an unknown form. */
    static String userOf(String caller) {
        return caller.startsWith(USER_PREFIX) ? caller.substring(USER_PREFIX.length()) : null;
    }

    /**
     * While auth is enabled in the applied auth state, a client's command is refused — not applied, not
     * remembered by its session — if the auth state changed after the proposing leader checked it
     * (INVALID_AUTH_TOKEN: log in again and retry), if it names no user, if the user lacks the permission (the
     * door's rule, {@link Authorization#refusal(AuthState, String, Command)}), or if it uses a lease another
     * caller granted (answered as no lease at all, as another's session is). Internal commands (no caller) and
     * entries from before issue 33 (no auth revision) are applied as they were.
     *
     * @return the refusal, or null: the command may be applied
     */
    StoreException refusal(Command cmd) {
        AuthState s = auth.state();
        if (cmd.getCaller().isEmpty() || !cmd.hasAuthRevision() || !s.enabled()) {
            return null;
        }
        if (cmd.getAuthRevision() < s.revision()) {
            return new StoreException(Error.Code.INVALID_AUTH_TOKEN, "the auth state changed (revision "
                    + s.revision() + ") after this request was checked; authenticate again and retry (it was not"
                    + " applied)");
        }
        String user = userOf(cmd.getCaller());
        if (user == null || !s.isUser(user)) {
            return new StoreException(Error.Code.INVALID_AUTH_TOKEN, "auth is enabled and the request names no user"
                    + " (it was checked as '" + cmd.getCaller() + "'); authenticate first and retry");
        }
        String refusal = Authorization.refusal(s, user, cmd);
        if (refusal != null) {
            return new StoreException(Error.Code.PERMISSION_DENIED, "user '" + user + "' " + refusal);
        }
        if (s.isRoot(user)) {
            return null;
        }
        return switch (cmd.getOpCase()) {
            case LEASE_REVOKE -> revokeRefusal(s, user, cmd.getCaller(), cmd.getLeaseRevoke().getID());
            case LEASE_KEEP_ALIVE -> notOwn(cmd.getCaller(), cmd.getLeaseKeepAlive().getID());
            case PUT -> notOwn(cmd.getCaller(), cmd.getPut().getLease());
            case TXN -> attachRefusal(cmd.getCaller(), cmd.getTxn(), 1);
            default -> null;
        };
    }

    /** Another caller's lease, or no lease: revoked by its owner only, and only if it may write every key. */
    private StoreException revokeRefusal(AuthState s, String user, String caller, long id) {
        StoreException notOwn = notOwn(caller, id);
        if (notOwn != null) {
            return notOwn;
        }
        String refusal = leases.contains(id) ? Authorization.revokeRefusal(s, user, id, store.keysOf(id)) : null;
        return refusal == null ? null : new StoreException(Error.Code.PERMISSION_DENIED, "user '" + user + "' " + refusal);
    }

    /**
     * LEASE_NOT_FOUND if lease {@code id} exists but {@code caller} did not grant it: the caller learns nothing of
     * another's lease (issue 33). Lease 0 is no lease; a missing one is apply's own LEASE_NOT_FOUND.
     */
    private StoreException notOwn(String caller, long id) {
        Lease lease = id == 0 ? null : leases.get(id);
        return lease == null || lease.owner().equals(caller) ? null : StoreException.leaseNotFound(id);
    }

    /** Every put of both branches, nested txns' too: a key is attached only to the caller's own lease. */
    private StoreException attachRefusal(String caller, TxnRequest t, int depth) {
        if (depth > Limits.MAX_TXN_DEPTH) {
            return null;   // Admission refuses deeper txns before they are applied
        }
        for (List<RequestOp> ops : List.of(t.getSuccessList(), t.getFailureList())) {
            for (RequestOp op : ops) {
                StoreException refused = op.hasRequestPut() ? notOwn(caller, op.getRequestPut().getLease())
                        : op.hasRequestTxn() ? attachRefusal(caller, op.getRequestTxn(), depth + 1) : null;
                if (refused != null) {
                    return refused;
                }
            }
        }
        return null;
    }

    /**
     * Whether the per-user bounds of {@code cmd} apply (issue 33): auth is enabled and the caller is a user
     * without the root role. With auth disabled every client is "anonymous", one caller, and no user could be
     * kept from another's leases or sessions anyway; root administers the cluster and is trusted with it.
     */
    boolean boundedCaller(Command cmd) {
        AuthState s = auth.state();
        String user = userOf(cmd.getCaller());
        return s.enabled() && user != null && !s.isRoot(user);
    }

    /**
     * Whether a client read of {@code caller} may see {@code lease}: always while auth is disabled; then its
     * owner and root only. "" is the member itself (its lease keeper, /metrics), which sees every lease.
     */
    boolean maySee(String caller, Lease lease) {
        AuthState s = auth.state();
        if (caller.isEmpty() || !s.enabled() || lease.owner().equals(caller)) {
            return true;
        }
        String user = userOf(caller);
        return user != null && s.isRoot(user);
    }
}
