package io.rota.server.kv;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import io.rota.proto.AlarmCommand;
import io.rota.proto.AlarmMember;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AlarmResponse;
import io.rota.proto.AlarmType;
import io.rota.proto.Command;
import io.rota.proto.CompactionRequest;
import io.rota.proto.CompactionResponse;
import io.rota.proto.CommandResult;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.DeleteRangeResponse;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseCheckpointResponse;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseExpireResponse;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseGrantResponse;
import io.rota.proto.LeaseKeepAliveResponse;
import io.rota.proto.LeaseLeasesResponse;
import io.rota.proto.LeaseRevokeResponse;
import io.rota.proto.HashKvRequest;
import io.rota.proto.HashKvResponse;
import io.rota.proto.LeaseStatus;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import io.rota.proto.Member;
import io.rota.proto.MemberUpdateResponse;
import io.rota.proto.PutRequest;
import io.rota.proto.PublishMemberResponse;
import io.rota.proto.PutResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisterMemberResponse;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.RegisteredMember;
import io.rota.proto.RetireMemberResponse;
import io.rota.proto.UpdateMemberRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.ResponseHeader;
import io.rota.proto.SessionKeepAliveResponse;
import io.rota.proto.SessionRef;
import io.rota.proto.StoreSnapshot;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import io.rota.raft.core.Entry;
import io.rota.raft.core.LogText;
import io.rota.raft.core.StateMachine;
import io.rota.server.auth.AuthException;
import io.rota.server.auth.Authorization;
import io.rota.server.auth.AuthState;
import io.rota.server.auth.AuthStore;
import io.rota.server.lease.Lease;
import io.rota.server.lease.LeaseListener;
import io.rota.server.lease.LeaseTable;
import io.rota.server.lease.LogClock;
import io.rota.server.session.Session;
import io.rota.server.session.SessionTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Rota's replicated coordination state machine: an etcd v3-style key-value store with transactions,
 * leases and a watch event stream, plus exactly-once client sessions (Raft thesis §6.3).
 *
 * <p>Each COMMAND entry carries a serialized {@link Command}; {@link #apply} answers it with a
 * {@link CommandResult} (a typed {@link Error} for bad input — never an exception). Apply is a pure
 * function of the entries: time is {@link LogClock}'s log time, which only leaders' monotonic clocks
 * advance (no member's wall clock or flags take part), ids come from entry indexes, and everything is
 * bounded by {@link Limits}.
 *
 * <p>Not thread-safe: the Raft driver's thread calls {@link #apply}, {@link #capture}, {@link #restore}
 * and the read-side methods ({@link #range}, {@link #timeToLive}, {@link #leases}, {@link #history}),
 * which the server uses for linearizable reads after a ReadIndex and which are not replicated. Only a
 * capture's {@code serialize} runs on another thread (the driver's snapshot thread), and it reads nothing
 * of this object.
 */
public final class CoordinationStateMachine implements StateMachine<CommandResult> {

    private static final Logger log = LoggerFactory.getLogger(CoordinationStateMachine.class);
    /** Refusals at apply come from clients' requests, at will: their lines are bounded. */
    private static final RefusalLog refusals = new RefusalLog(log, 10);

    /** The caller of a request while auth is disabled (issue 31): one caller for every client. */
    public static final String ANONYMOUS = "anonymous";
    private static final String USER_PREFIX = "user:";

    private final Limits limits;
    private final KvStore store;
    private final LeaseTable leases;
    private final SessionTable sessions;
    /** Published members by id (etcd's member attributes); replicated so every member can forward writes. */
    private final TreeMap<Long, Member> members = new TreeMap<>();
    /**
     * The member registry (issue 13), by id: every member `member add` registered, and every member removed
     * (a bootstrap member enters it when removed). Ids are never reused: {@link #nextMemberId} only grows.
     */
    private final TreeMap<Long, RegisteredMember> registry = new TreeMap<>();
    private long nextMemberId = 1;
    private final LogClock clock = new LogClock();
    /** Whether the command being applied advanced {@link #clock} by its own stamp (see requireCountedStamp). */
    private boolean stampCounted;
    /** Users, roles and permissions (issue 15): replicated like everything here, read by the auth gate. */
    private final AuthStore auth = new AuthStore();
    /** What apply means for the runtime, carried out after each batch (issue 30): never thrown into apply. */
    private final Effects effects = new Effects();
    /** The last entry applied (any type): what a capture is as of (issue 18: backups report it). */
    private long appliedIndex;
    private long appliedTerm;
    /** Armed alarms (issue 18), sorted by member id, then type; NOSPACE among them refuses growing writes. */
    private final TreeMap<AlarmKey, AlarmMember> alarms = new TreeMap<>();
    /** Cached "a NOSPACE alarm is armed": the one branch the quota costs a write. */
    private boolean noSpace;

    public CoordinationStateMachine(Limits limits) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.store = new KvStore(limits);
        this.leases = new LeaseTable(limits.maxLeases());
        this.sessions = new SessionTable(limits.maxSessions(), limits.sessionTtlMs(),
                limits.rememberedResponsesPerSession(), limits.rememberedBytesPerSession(),
                limits.rememberedBytesTotal());
    }

    /** Who hears about each written revision (the watch hub). */
    public void setListener(StoreListener listener) {
        effects.setStoreListener(listener);
    }

    /** Who hears about changes of the member registry and the published members (the server's peer table). */
    public void setRegistryListener(MemberRegistryListener registryListener) {
        effects.setRegistryListener(registryListener);
    }

    /** Who hears about each lease renewal and removal (the leader's lease keeper). */
    public void setLeaseListener(LeaseListener leaseListener) {
        effects.setLeaseListener(leaseListener);
    }

    @Override
    public List<CommandResult> apply(List<Entry> committed) {
        List<CommandResult> results = new ArrayList<>(committed.size());
        for (Entry e : committed) {
            results.add(e.type() != Entry.Type.COMMAND ? null : apply(e.index(), e.term(), e.data()));
            appliedIndex = e.index();
            appliedTerm = e.term();
        }
        effects.carryOut();
        return results;
    }

    /**
     * Apply is total (issue 30): every entry is applied or refused, on every member alike. A refusal is a
     * {@link StoreException}; anything else escaping a command is a bug in this class, and it is still a
     * refusal — the same on every member, since apply is deterministic — logged with the entry's index and
     * command, rather than an exception that would stop every member on every replay of the entry.
     */
    private CommandResult apply(long index, long term, byte[] data) {
        Command cmd;
        try {
            cmd = Command.parseFrom(data);
        } catch (InvalidProtocolBufferException e) {
            return error(StoreException.invalid("malformed command"));
        }
        try {
            return applyCommand(index, term, cmd);
        } catch (RuntimeException e) {
            log.error("BUG: entry {} ({}) could not be applied; it is refused, as on every member. Command: {}", index,
                    cmd.getOpCase(), TextFormat.shortDebugString(cmd), e);
            // The class only: the answer is replicated state (remembered by sessions), the same on every member.
            return error(StoreException.invalid("entry " + index + " (" + cmd.getOpCase() + ") could not be applied"
                    + " and was refused on every member: " + e.getClass().getName()
                    + " (a bug in Rota; the member's log has the details)"));
        }
    }

    private CommandResult applyCommand(long index, long term, Command cmd) {
        stampCounted = clock.advance(term, cmd.getStamp());
        long nowMs = clock.nowMs();
        sessions.expire(nowMs);
        StoreException refused = authorize(cmd);
        if (refused != null) {
            // Before the session is looked at: a refused command is not applied and not remembered, so its
            // retry under the same sequence (after logging in again) is applied as new.
            refusals.info(nowMs, "entry refused for {} ({}): {}", LogText.escape(cmd.getCaller()), cmd.getOpCase(),
                    LogText.escape(refused.error().getMessage()));   // the message names keys: text from clients
            return error(refused);
        }
        SessionRef ref = cmd.getSession();
        if (ref.getClientId() == 0 || cmd.hasRegisterSession()) {
            return execute(index, cmd);
        }
        Session session = sessions.get(ref.getClientId());
        if (session == null || !isOwn(session, cmd.getCaller(), ref.getSecret())) {
            // Another caller's session, or a wrong secret, is answered as no session at all (issue 31): the
            // caller learns nothing of it, and it is not touched.
            return error(unknownSession(ref.getClientId()));
        }
        sessions.touch(session, nowMs);
        if (ref.getSequence() == 0) {
            return error(StoreException.invalid("sequence starts at 1"));
        }
        if (ref.getFirstIncomplete() > ref.getSequence()) {
            return error(StoreException.invalid("first_incomplete " + ref.getFirstIncomplete()
                    + " is above the request's own sequence " + ref.getSequence()));
        }
        sessions.discardBelow(session, ref.getFirstIncomplete());
        Optional<CommandResult> remembered = session.remembered(ref.getSequence());
        if (remembered.isPresent()) {
            return remembered.get();
        }
        if (session.forgotten(ref.getSequence())) {
            return error(new StoreException(Error.Code.OUTCOME_UNKNOWN, "sequence " + ref.getSequence()
                    + " may have been applied, but its response is no longer remembered (the session's window or"
                    + " byte bound); it is not applied again"));
        }
        CommandResult result = execute(index, cmd);
        sessions.remember(session, ref.getSequence(), result);
        return result;
    }

    /**
     * Whether a request of {@code caller} with {@code secret} may use {@code session} (issue 31). An entry
     * proposed before issue 31 names no caller and is applied as it was then, so old logs replay unchanged.
     */
    private static boolean isOwn(Session session, String caller, ByteString secret) {
        return caller.isEmpty() || session.belongsTo(caller, secret);
    }

    private static StoreException unknownSession(long clientId) {
        return new StoreException(Error.Code.SESSION_EXPIRED, "session " + clientId + " is unknown or expired");
    }

    /** The caller a request of {@code user} is applied as (null: auth disabled, anonymous). */
    public static String caller(String user) {
        return user == null ? ANONYMOUS : USER_PREFIX + user;
    }

    /** The user {@code caller} names, or null for "anonymous", an internal command or an unknown form. */
    static String userOf(String caller) {
        return caller.startsWith(USER_PREFIX) ? caller.substring(USER_PREFIX.length()) : null;
    }

    /**
     * Authorization at apply (issue 33, as etcd's AuthInfo): while auth is enabled in the applied auth state, a
     * client's command is refused — not applied, not remembered by its session — if the auth state changed after
     * the proposing leader checked it (INVALID_AUTH_TOKEN: log in again and retry), if it names no user, if the
     * user lacks the permission (the door's rule, {@link Authorization#refusal(AuthState, String, Command)}), or if
     * it uses a lease another caller granted (answered as no lease at all, as another's session is). Internal
     * commands (no caller) and entries from before issue 33 (no auth revision) are applied as they were.
     * Deterministic: the applied auth state and the applied leases and keys only.
     */
    private StoreException authorize(Command cmd) {
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
    private boolean boundedCaller(Command cmd) {
        AuthState s = auth.state();
        String user = userOf(cmd.getCaller());
        return s.enabled() && user != null && !s.isRoot(user);
    }

    private CommandResult execute(long index, Command cmd) {
        try {
            Admission.require(cmd);
            if (noSpace && growsState(cmd)) {
                throw noSpaceError();
            }
            CommandResult.Builder out = CommandResult.newBuilder();
            switch (cmd.getOpCase()) {
                case PUT -> out.setPut(put(cmd.getPut()));
                case DELETE_RANGE -> out.setDeleteRange(delete(cmd.getDeleteRange()));
                case TXN -> out.setTxn(txn(cmd.getTxn()));
                case LEASE_GRANT -> out.setLeaseGrant(grant(index, cmd));
                case LEASE_REVOKE -> out.setLeaseRevoke(
                        LeaseRevokeResponse.newBuilder().setHeader(revoke(cmd.getLeaseRevoke().getID())));
                case LEASE_EXPIRE -> out.setLeaseExpire(expire(cmd.getLeaseExpire()));
                case LEASE_KEEP_ALIVE -> out.setLeaseKeepAlive(keepAlive(index, cmd.getLeaseKeepAlive().getID()));
                case LEASE_CHECKPOINT -> out.setLeaseCheckpoint(checkpoint(cmd.getLeaseCheckpoint()));
                case REGISTER_SESSION -> out.setRegisterSession(register(index, cmd));
                case SESSION_KEEP_ALIVE -> out.setSessionKeepAlive(keepAliveSession(cmd));
                case PUBLISH_MEMBER -> out.setPublishMember(publish(cmd.getPublishMember().getMember()));
                case REGISTER_MEMBER -> out.setRegisterMember(registerMember(cmd.getRegisterMember()));
                case RETIRE_MEMBER -> out.setRetireMember(retireMember(cmd.getRetireMember().getId()));
                case UPDATE_MEMBER -> out.setUpdateMember(updateMember(cmd.getUpdateMember()));
                case ALARM -> out.setAlarm(alarm(cmd.getAlarm()));
                case COMPACTION -> out.setCompaction(compact(cmd.getCompaction()));

                case AUTH -> out.setAuth(applyAuth(cmd.getAuth()));
                case OP_NOT_SET -> throw StoreException.invalid("command without an operation");
            }
            return out.build();
        } catch (StoreException e) {
            return error(e);
        }
    }

    /** An auth change (issue 15); a refusal is the same typed error as the store's. */
    private io.rota.proto.AuthResponse applyAuth(io.rota.proto.AuthCommand change) {
        io.rota.server.auth.AuthState before = auth.state();
        try {
            return auth.apply(change).toBuilder().setHeader(header()).build();
        } catch (AuthException e) {
            throw new StoreException(e.error());
        } finally {
            if (auth.state() != before) {   // a new state: watches made under the old one are re-checked
                effects.add(new Effects.AuthChanged(auth.state()));
            }
        }
    }

    private static CommandResult error(StoreException e) {
        return CommandResult.newBuilder().setError(e.error()).build();
    }

    private ResponseHeader header() {
        return ResponseHeader.newBuilder().setRevision(store.revision()).build();
    }

    // ---- key-value ------------------------------------------------------------------------------------

    private PutResponse put(PutRequest req) {
        WriteTxn txn = store.begin(leases::contains);
        PutResponse.Builder out = txn.put(req);
        commit(txn);
        return out.setHeader(header()).build();
    }

    private DeleteRangeResponse delete(DeleteRangeRequest req) {
        WriteTxn txn = store.begin(leases::contains);
        DeleteRangeResponse.Builder out = txn.delete(req);
        commit(txn);
        return out.setHeader(header()).build();
    }

    /**
     * etcd's Txn, nested txns included (see {@link TxnTree}): every compare of the tree on the state before the
     * txn, then the chosen branches, atomically, at one revision.
     */
    private TxnResponse txn(TxnRequest req) {
        TxnTree.check(req, limits);
        TxnTree.Path path = TxnTree.path(store, req);
        WriteTxn txn = store.begin(leases::contains);
        TxnResponse.Builder out;
        try {
            out = TxnTree.apply(txn, req, path);
        } catch (StoreException e) {
            txn.rollback();
            throw e;
        }
        commit(txn);
        // Like etcd, every response of the txn carries the header of the txn's final revision.
        TxnTree.stamp(out, header());
        return out.build();
    }

    private void commit(WriteTxn txn) {
        List<Event> events = store.commit(txn);
        if (!events.isEmpty()) {
            effects.add(new Effects.Revision(store.revision(), events));
        }
    }

    // ---- leases ---------------------------------------------------------------------------------------

    private LeaseGrantResponse grant(long index, Command cmd) {
        LeaseGrantRequest req = cmd.getLeaseGrant();
        if (req.getTTL() < 1 || req.getTTL() > limits.maxLeaseTtlSeconds()) {
            throw StoreException.invalid("lease TTL must be within [1, " + limits.maxLeaseTtlSeconds() + "] s");
        }
        if (req.getID() < 0) {
            throw StoreException.invalid("lease ID must not be negative");
        }
        if (req.getID() != 0 && leases.contains(req.getID())) {
            throw StoreException.invalid(Error.Reason.LEASE_EXISTS, "lease " + req.getID() + " already exists");
        }
        if (leases.isFull()) {
            throw StoreException.full("too many leases (" + limits.maxLeases() + ")");
        }
        int bound = cmd.getMaxLeasesPerUser();
        if (bound > 0 && boundedCaller(cmd) && leases.countOf(cmd.getCaller()) >= bound) {
            throw StoreException.full("user '" + userOf(cmd.getCaller()) + "' holds " + bound + " leases, its quota"
                    + " (the leader's --max-leases-per-user): revoke one, or let one expire, before granting more");
        }
        // The TTL is taken as logged: the leader raised it to its minimum before proposing, so no member's
        // own flags decide a replicated value (issue 11, hole 3).
        requireCountedStamp("lease grant");
        long id = req.getID() != 0 ? req.getID() : leases.freeId(index);
        long ttl = req.getTTL();
        leases.grant(id, ttl, cmd.getCaller(), clock.nowMs() + ttl * 1000, index);
        effects.add(new Effects.LeaseRenewed(id, ttl, index));
        return LeaseGrantResponse.newBuilder().setHeader(header()).setID(id).setTTL(ttl).build();
    }

    /**
     * The leader's expiry, decided on its clock for the renewal it timed. If a keep-alive renewed the lease
     * after that decision (it was in the log first), the expiry is stale and deletes nothing: the keep-alive
     * was answered with TTL &gt; 0, and its holder's safe-until stands (issue 11, hole 1).
     */
    private LeaseExpireResponse expire(LeaseExpireRequest req) {
        Lease lease = existingLease(req.getID());
        if (lease.renewal() != req.getRenewal()) {
            return LeaseExpireResponse.newBuilder().setHeader(header()).setRenewedSince(true).build();
        }
        return LeaseExpireResponse.newBuilder().setHeader(revoke(req.getID())).build();
    }

    /** Revoke and Expire: the lease and all its keys go, the keys in one revision. */
    private ResponseHeader revoke(long id) {
        if (leases.remove(id) == null) {
            throw StoreException.leaseNotFound(id);
        }
        List<ByteString> keys = store.keysOf(id);
        effects.add(new Effects.LeaseEnded(id, keys.size()));
        WriteTxn txn = store.begin(leases::contains);
        for (ByteString key : keys) {
            txn.deleteKey(store.get(key));
        }
        commit(txn);
        return header();
    }

    /**
     * A lease's deadline is log time now + TTL, and its holder counts its safe-until from when it sent the
     * grant or keep-alive. Log time stands still at an entry whose stamp did not count (stamped in another term,
     * or by no leader), so it may lag real time there, and a deadline set from it could pass before the holder's
     * safe-until (issue 31). Such a grant or keep-alive is refused, the same on every replica; the client
     * retries it, and its safe-until does not move meanwhile.
     */
    private void requireCountedStamp(String what) {
        if (!stampCounted) {
            throw new StoreException(Error.Code.UNAVAILABLE, what + " refused: its entry carries no log-clock stamp"
                    + " of its own term, so the lease could not be timed; retry");
        }
    }

    private LeaseKeepAliveResponse keepAlive(long index, long id) {
        Lease lease = existingLease(id);
        requireCountedStamp("keep-alive of lease " + id);
        lease.keepAlive(clock.nowMs(), index);
        effects.add(new Effects.LeaseRenewed(id, lease.ttlSeconds(), index));
        return LeaseKeepAliveResponse.newBuilder().setHeader(header()).setID(id).setTTL(lease.ttlSeconds()).build();
    }

    private LeaseCheckpointResponse checkpoint(LeaseCheckpointRequest req) {
        // A lease revoked or renewed after the leader built the checkpoint is skipped: a checkpoint of an
        // older renewal would pull the deadline a keep-alive just set back before the holder's safe-until.
        for (LeaseCheckpointRequest.Checkpoint c : req.getCheckpointsList()) {
            Lease lease = leases.get(c.getID());
            if (lease != null && lease.renewal() == c.getRenewal()) {
                lease.checkpoint(clock.nowMs(), c.getRemainingMs());
            }
        }
        return LeaseCheckpointResponse.newBuilder().setHeader(header()).build();
    }

    private Lease existingLease(long id) {
        Lease lease = leases.get(id);
        if (lease == null) {
            throw StoreException.leaseNotFound(id);
        }
        return lease;
    }

    // ---- members --------------------------------------------------------------------------------------

    /** A member announces (or re-announces) its addresses; the latest announcement wins. No revision. */
    private PublishMemberResponse publish(Member member) {
        RegisteredMember registered = registry.get(member.getId());
        if (registered != null && registered.getRemoved()) {
            throw StoreException.invalid("member " + member.getId() + " was removed from the cluster; its id is"
                    + " never used again");
        }
        members.put(member.getId(), member);
        nextMemberId = Math.max(nextMemberId, member.getId() + 1);
        registryChanged();
        return PublishMemberResponse.newBuilder().setHeader(header()).build();
    }

    /**
     * `member add`'s first step: an entry with a new id, one above every id ever registered, published or in
     * the proposing leader's configuration ({@code id_floor}), so an id is never handed out twice. A retry
     * (same name and peer address, not removed) gets the same entry back. Names and peer addresses are
     * unique among the members not removed.
     */
    private RegisterMemberResponse registerMember(RegisterMemberRequest req) {
        for (RegisteredMember r : registry.values()) {
            if (r.getRemoved()) {
                continue;
            }
            if (r.getName().equals(req.getName()) && r.getPeerAddress().equals(req.getPeerAddress())) {
                return RegisterMemberResponse.newBuilder().setHeader(header()).setMember(r).build();
            }
            if (r.getName().equals(req.getName()) || r.getPeerAddress().equals(req.getPeerAddress())) {
                throw nameTaken("member " + r.getId() + " (" + r.getName() + " at " + r.getPeerAddress()
                        + ") already has that name or peer address");
            }
        }
        for (Member m : members.values()) {
            if (m.getName().equals(req.getName()) || m.getPeerAddress().equals(req.getPeerAddress())) {
                throw nameTaken("member " + m.getId() + " (" + m.getName() + " at " + m.getPeerAddress()
                        + ") already has that name or peer address");
            }
        }
        long id = Math.max(nextMemberId, req.getIdFloor() + 1);
        if (id >= Admission.MAX_MEMBER_ID) {
            throw StoreException.invalid("no member id is left above " + (id - 1));
        }
        RegisteredMember entry = RegisteredMember.newBuilder().setId(id).setName(req.getName())
                .setPeerAddress(req.getPeerAddress()).setClientAddress(req.getClientAddress())
                .setLearner(req.getLearner()).build();
        registry.put(id, entry);
        nextMemberId = id + 1;
        registryChanged();
        return RegisterMemberResponse.newBuilder().setHeader(header()).setMember(entry).build();
    }

    /** `member remove`'s last step: the id is marked removed for good, and no longer published. */
    private RetireMemberResponse retireMember(long id) {
        if (id == 0) {
            throw StoreException.invalid("member id 0 does not exist");
        }
        RegisteredMember entry = registry.get(id);
        Member published = members.remove(id);
        RegisteredMember.Builder retired = entry != null ? entry.toBuilder()
                : RegisteredMember.newBuilder().setId(id);
        if (entry == null && published != null) {
            retired.setName(published.getName()).setPeerAddress(published.getPeerAddress())
                    .setClientAddress(published.getClientAddress());
        }
        registry.put(id, retired.setRemoved(true).build());
        nextMemberId = Math.max(nextMemberId, id + 1);
        registryChanged();
        return RetireMemberResponse.newBuilder().setHeader(header()).build();
    }

    /**
     * `member update` (etcd's MemberUpdate): member {@code id} is dialled at a new peer address from now on.
     * Both tables are rewritten, the registry entry (made from the publication, or from the id alone for a
     * bootstrap member that never published) and the publication, so that they agree: the peer directory
     * reads both, and an older publication must not put the old address back (design Y31). The member's name
     * and client address stay. Refused: a removed id, an id neither table knows unless the proposing leader's
     * configuration has it, an address that is not host:port, one another member has.
     */
    private MemberUpdateResponse updateMember(UpdateMemberRequest req) {
        long id = req.getId();
        String peer = req.getPeerAddress();
        RegisteredMember entry = registry.get(id);
        Member published = members.get(id);
        if (id == 0 || (entry != null && entry.getRemoved())
                || (entry == null && published == null && !req.getInConfiguration())) {
            throw new StoreException(Error.newBuilder().setCode(Error.Code.MEMBERSHIP_REFUSED)
                    .setMembershipRefusal("NOT_A_MEMBER").setMessage("member " + id + (entry != null
                            ? " was removed from the cluster" : " is not a member of the cluster")).build());
        }
        for (RegisteredMember r : registry.values()) {
            if (r.getId() != id && !r.getRemoved() && r.getPeerAddress().equals(peer)) {
                throw nameTaken("member " + r.getId() + " (" + r.getName() + ") already has peer address " + peer);
            }
        }
        for (Member m : members.values()) {
            if (m.getId() != id && m.getPeerAddress().equals(peer)) {
                throw nameTaken("member " + m.getId() + " (" + m.getName() + ") already has peer address " + peer);
            }
        }
        RegisteredMember.Builder updated = entry != null ? entry.toBuilder() : RegisteredMember.newBuilder().setId(id);
        if (entry == null && published != null) {
            updated.setName(published.getName()).setClientAddress(published.getClientAddress());
        }
        RegisteredMember after = updated.setPeerAddress(peer).build();
        registry.put(id, after);
        if (published != null) {
            members.put(id, published.toBuilder().setPeerAddress(peer).build());
        }
        nextMemberId = Math.max(nextMemberId, id + 1);
        registryChanged();
        return MemberUpdateResponse.newBuilder().setHeader(header()).setMember(after).build();
    }

    private static StoreException nameTaken(String message) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.MEMBERSHIP_REFUSED).setMessage(message)
                .setMembershipRefusal("NAME_TAKEN").build());
    }

    private void registryChanged() {
        effects.add(new Effects.MembersChanged(List.copyOf(registry.values()), List.copyOf(members.values())));
    }

    // ---- sessions -------------------------------------------------------------------------------------

    /**
     * The client id is the index of the registering entry: unique and the same on every replica (§6.3). The
     * session belongs to the command's caller; its secret was chosen by the proposing leader (issue 31).
     */
    private RegisterSessionResponse register(long index, Command cmd) {
        ByteString secret = cmd.getRegisterSession().getSecret();
        // Past its bound, a user's own least recently active session goes, never another's (issue 33).
        sessions.register(index, cmd.getCaller(), secret, clock.nowMs(),
                boundedCaller(cmd) ? cmd.getMaxSessionsPerUser() : 0);
        return RegisterSessionResponse.newBuilder().setHeader(header()).setClientId(index)
                .setSessionTtlMs(sessions.ttlMs()).setRememberedResponses(sessions.window()).setSecret(secret).build();
    }

    private SessionKeepAliveResponse keepAliveSession(Command cmd) {
        long clientId = cmd.getSessionKeepAlive().getClientId();
        Session session = sessions.get(clientId);
        if (session == null || !isOwn(session, cmd.getCaller(), cmd.getSessionKeepAlive().getSecret())) {
            throw unknownSession(clientId);
        }
        sessions.touch(session, clock.nowMs());
        return SessionKeepAliveResponse.newBuilder().setHeader(header()).build();
    }

    // ---- space quota and compaction (issue 18) -------------------------------------------------------

    /**
     * Whether {@code cmd} is refused while NOSPACE is armed: what makes the state bigger — a put, a txn with a
     * put in any branch, a lease grant (etcd's quota applies to the same three). Deletes, revokes,
     * keep-alives, compaction, sessions and membership still work, so an operator can free space.
     */
    private static boolean growsState(Command cmd) {
        return switch (cmd.getOpCase()) {
            case PUT, LEASE_GRANT -> true;
            case TXN -> TxnTree.hasPut(cmd.getTxn());
            default -> false;
        };
    }

    private StoreException noSpaceError() {
        return new StoreException(Error.Code.NO_SPACE, "the cluster's space quota is used up (NOSPACE alarm; "
                + store.accountedBytes() + " bytes accounted): writes that add data are refused. Free space — "
                + "'rotactl compaction REV' to drop old history, delete keys — then 'rotactl alarm disarm'");
    }

    /** Arm or disarm an alarm. Arming twice, or disarming what is not armed, changes nothing (retries are safe). */
    private AlarmResponse alarm(AlarmCommand req) {
        switch (req.getAction()) {
            case ACTIVATE -> {
                if (req.getMemberId() == 0 || req.getAlarm() == AlarmType.ALARM_NONE) {
                    throw StoreException.invalid("an alarm is armed for one member and one type");
                }
                if (req.getAlarm() == AlarmType.UNRECOGNIZED) {
                    // A type a newer member knows: refused here alike on every member of this version.
                    throw StoreException.invalid("unknown alarm type " + req.getAlarmValue());
                }
                alarms.put(alarmKey(req.getMemberId(), req.getAlarmValue()),
                        AlarmMember.newBuilder().setMemberId(req.getMemberId()).setAlarm(req.getAlarm()).build());
            }
            case DEACTIVATE -> alarms.values().removeIf(a -> (req.getMemberId() == 0 || a.getMemberId() == req.getMemberId())
                    && (req.getAlarm() == AlarmType.ALARM_NONE || a.getAlarm() == req.getAlarm()));
            default -> throw StoreException.invalid("an alarm command arms or disarms, got " + req.getAction());
        }
        noSpace = alarms.values().stream().anyMatch(a -> a.getAlarm() == AlarmType.NOSPACE);
        return alarms();
    }

    /** One map key per (member, type), ordered by member id, then type. */
    private static AlarmKey alarmKey(long memberId, int type) {
        return new AlarmKey(memberId, type);
    }

    /** An alarm's place in {@link #alarms}: every (member id, type) apart (a shifted id dropped its top bits). */
    private record AlarmKey(long memberId, int type) implements Comparable<AlarmKey> {
        @Override
        public int compareTo(AlarmKey o) {
            int byMember = Long.compareUnsigned(memberId, o.memberId);
            return byMember != 0 ? byMember : Integer.compare(type, o.type);
        }
    }

    /**
     * etcd's Compact: the history at and below {@code revision} goes; a read or watch of an older revision
     * then fails COMPACTED. A future revision is INVALID_ARGUMENT; one at or below the compact revision is
     * COMPACTED (as etcd's ErrCompacted), so a repeated compaction tells the caller it was already done.
     */
    private CompactionResponse compact(CompactionRequest req) {
        long rev = req.getRevision();
        if (rev > store.revision()) {
            throw StoreException.invalid(Error.Reason.FUTURE_REVISION, "cannot compact at revision " + rev
                    + ": the current revision is " + store.revision());
        }
        long compacted = store.history().compactRevision();
        if (rev <= compacted) {
            throw StoreException.compacted(rev, compacted);
        }
        store.history().compact(rev);
        return CompactionResponse.newBuilder().setHeader(header()).setCompactRevision(rev).build();
    }

    /** The armed alarms, for AlarmRequest GET (read side) and every alarm command's answer. */
    public AlarmResponse alarms() {
        return AlarmResponse.newBuilder().setHeader(header()).addAllAlarms(alarms.values()).build();
    }

    /** Whether NOSPACE is armed (the leader's quota check does not propose it twice). */
    public boolean noSpace() {
        return noSpace;
    }

    /** What the space quota compares with --quota-backend-bytes (see {@link KvStore#accountedBytes}). */
    public long accountedBytes() {
        return store.accountedBytes();
    }

    /** The history's compact revision: reads and watches must be above it. */
    public long compactRevision() {
        return store.history().compactRevision();
    }

    /** The last applied entry's index (what a capture is as of). */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** The last applied entry's term. */
    public long appliedTerm() {
        return appliedTerm;
    }

    // ---- snapshot -------------------------------------------------------------------------------------

    /**
     * The whole state: keys, revision, the log clock, leases (remaining TTL relative to that time), sessions
     * with their remembered responses, and the watch history. Sorted, no map fields: equal states give
     * equal bytes.
     *
     * <p>The capture is the image's head — everything but keys and history, a few messages per lease,
     * session and member — and reference copies of the key and history lists, made here on the driver thread.
     * Keys, events and remembered responses are immutable protobuf messages, so it costs a pointer per key,
     * not a byte per key, and later applies cannot change it. The expensive part, writing the image as a
     * stream ({@link StoreImage}), runs on the snapshot thread (docs/design.md H7 has the measurements).
     */
    @Override
    public Capture capture() {
        StoreSnapshot head = head();
        List<KeyValue> kvs = new ArrayList<>(store.all());
        List<Event> history = store.history().all();
        return out -> StoreImage.write(out, head, kvs, history);
    }

    /**
     * The whole image as a message: what a backup streams (issue 18). Driver thread only; the same
     * reference copy as {@link #capture}, so as cheap.
     */
    public StoreSnapshot image() {
        return head().toBuilder().addAllKvs(store.all()).addAllHistory(store.history().all()).build();
    }

    /** The image without its two long lists, the keys and the watch history. */
    private StoreSnapshot head() {
        StoreSnapshot.Builder out = StoreSnapshot.newBuilder()
                .setRevision(store.revision())
                .setLogTimeMs(clock.nowMs())
                .setClockTerm(clock.term())
                .setClockTermElapsedMs(clock.termElapsedMs())
                .setCompactRevision(store.history().compactRevision())
                .addAllMembers(members.values())
                .addAllRegistry(registry.values())
                .setNextMemberId(nextMemberId)
                .setAppliedIndex(appliedIndex)
                .setAppliedTerm(appliedTerm)
                .addAllAlarms(alarms.values())
                .setAuth(auth.image());
        for (Lease l : leases.all()) {
            out.addLeases(leaseImage(l));
        }
        for (Session s : sessions.all()) {
            StoreSnapshot.SessionImage.Builder image = StoreSnapshot.SessionImage.newBuilder()
                    .setClientId(s.clientId()).setLastActiveMs(s.lastActiveMs())
                    .setForgottenThrough(s.forgottenThrough()).setOwner(s.owner()).setSecret(s.secret());
            s.responses().forEach((seq, result) -> image.addSequences(seq).addResponses(result));
            out.addSessions(image);
        }
        return out.build();
    }

    /**
     * Replace the whole state by an image streamed from {@link #capture()} (or, from a data directory of
     * before streamed images, one message). It comes through checksummed storage or transport, so a
     * malformed one is a bug or corruption: it is read whole and refused before anything changes.
     */
    @Override
    public void restore(InputStream snapshot) throws IOException {
        restore(StoreImage.read(snapshot));
    }

    private void restore(StoreSnapshot image) {
        clock.restore(image.getLogTimeMs(), image.getClockTerm(), image.getClockTermElapsedMs());
        long nowMs = clock.nowMs();
        store.reset(image.getRevision(), image.getKvsList(), image.getCompactRevision(), image.getHistoryList());
        leases.clear();
        for (StoreSnapshot.LeaseImage l : image.getLeasesList()) {
            leases.grant(l.getID(), l.getTTL(), l.getOwner(), nowMs + l.getRemainingMs(), l.getRenewal());
        }
        members.clear();
        image.getMembersList().forEach(m -> members.put(m.getId(), m));
        registry.clear();
        image.getRegistryList().forEach(r -> registry.put(r.getId(), r));
        // A snapshot from before the registry has no next id: one above every id it names.
        nextMemberId = Math.max(image.getNextMemberId(), 1);
        members.keySet().forEach(id -> nextMemberId = Math.max(nextMemberId, id + 1));
        registryChanged();
        auth.restore(image.getAuth());
        sessions.clear();
        for (StoreSnapshot.SessionImage s : image.getSessionsList()) {
            Map<Long, CommandResult> remembered = new TreeMap<>();
            for (int i = 0; i < s.getSequencesCount(); i++) {
                remembered.put(s.getSequences(i), s.getResponses(i));
            }
            sessions.restore(s.getClientId(), s.getOwner(), s.getSecret(), s.getLastActiveMs(), s.getForgottenThrough(),
                    remembered);
        }
        appliedIndex = image.getAppliedIndex();
        appliedTerm = image.getAppliedTerm();
        alarms.clear();
        image.getAlarmsList().forEach(a -> alarms.put(alarmKey(a.getMemberId(), a.getAlarmValue()), a));
        noSpace = alarms.values().stream().anyMatch(a -> a.getAlarm() == AlarmType.NOSPACE);
        effects.add(new Effects.Restored(store.revision()));
        effects.add(new Effects.AuthChanged(auth.state()));
        effects.carryOut();
    }

    // ---- read side (not replicated) -------------------------------------------------------------------

    /**
     * A Range at the applied state.
     *
     * @throws StoreException INVALID_ARGUMENT, REQUEST_TOO_LARGE or COMPACTED
     */
    public RangeResponse range(RangeRequest req) {
        return store.range(req, List.of());
    }

    /**
     * etcd's HashKV over this member's applied state (see {@link KvStore#hash}).
     *
     * @throws StoreException COMPACTED (older than the history) or INVALID_ARGUMENT (a future revision)
     */
    public HashKvResponse hashKv(HashKvRequest req) {
        long[] hash = store.hash(req.getRevision());
        return HashKvResponse.newBuilder().setHeader(header()).setHash((int) hash[0]).setHashRevision(hash[1])
                .setCompactRevision(store.history().compactRevision()).build();
    }

    /**
     * TimeToLive at the applied log time: remaining = deadline − log time, where the deadline was set by
     * the last grant, keep-alive or checkpoint. Log time moves with entries (the leader checkpoints live
     * leases every half second), so the answer may be that much too long — never too short.
     *
     * @throws StoreException LEASE_NOT_FOUND
     */
    public LeaseTimeToLiveResponse timeToLive(LeaseTimeToLiveRequest req) {
        return timeToLive(req, "");
    }

    /**
     * {@link #timeToLive(LeaseTimeToLiveRequest)} as asked by {@code caller} (a client's read, issue 33): while
     * auth is enabled, another caller's lease is answered LEASE_NOT_FOUND unless the caller is root.
     */
    public LeaseTimeToLiveResponse timeToLive(LeaseTimeToLiveRequest req, String caller) {
        Lease lease = existingLease(req.getID());
        if (!maySee(caller, lease)) {
            throw StoreException.leaseNotFound(req.getID());
        }
        long remainingMs = lease.remainingMs(clock.nowMs());
        LeaseTimeToLiveResponse.Builder out = LeaseTimeToLiveResponse.newBuilder().setHeader(header())
                .setID(lease.id()).setGrantedTTL(lease.ttlSeconds()).setTTL((remainingMs + 999) / 1000);
        if (req.getKeys()) {
            out.addAllKeys(store.keysOf(lease.id()));
        }
        return out.build();
    }

    /** All live leases, by id. */
    public LeaseLeasesResponse leases() {
        return leases("");
    }

    /** The live leases {@code caller} may see (issue 33): while auth is enabled its own, or all for root. */
    public LeaseLeasesResponse leases(String caller) {
        LeaseLeasesResponse.Builder out = LeaseLeasesResponse.newBuilder().setHeader(header());
        leases.all().stream().filter(l -> maySee(caller, l))
                .forEach(l -> out.addLeases(LeaseStatus.newBuilder().setID(l.id())));
        return out.build();
    }

    /**
     * Whether a client read of {@code caller} may see {@code lease}: always while auth is disabled; then its
     * owner and root only. "" is the member itself (its lease keeper, /metrics), which sees every lease.
     */
    private boolean maySee(String caller, Lease lease) {
        AuthState s = auth.state();
        if (caller.isEmpty() || !s.enabled() || lease.owner().equals(caller)) {
            return true;
        }
        String user = userOf(caller);
        return user != null && s.isRoot(user);
    }

    /** Retained events from {@code startRevision} on, or COMPACTED; for the watch hub. */
    public HistoryRead history(long startRevision) {
        return store.history().read(startRevision);
    }

    /**
     * Every live lease with its granted TTL, its latest renewal and the time left at the applied log time:
     * where a new leader's lease keeper starts its deadlines (etcd's checkpointed remaining TTL). Only
     * replicated durations enter it, no member's wall clock (issue 11, hole 2).
     */
    public List<StoreSnapshot.LeaseImage> leaseImages() {
        List<StoreSnapshot.LeaseImage> out = new ArrayList<>();
        for (Lease l : leases.all()) {
            out.add(leaseImage(l).build());
        }
        return out;
    }

    private StoreSnapshot.LeaseImage.Builder leaseImage(Lease l) {
        return StoreSnapshot.LeaseImage.newBuilder().setID(l.id()).setTTL(l.ttlSeconds())
                .setRemainingMs(l.remainingMs(clock.nowMs())).setRenewal(l.renewal()).setOwner(l.owner());
    }

    /** Live keys, for /metrics. */
    public int keyCount() {
        return store.size();
    }

    /** Live leases, for /metrics. */
    public int leaseCount() {
        return leases.size();
    }

    /** The member registry (issue 13), by id, removed members included. */
    public List<RegisteredMember> registry() {
        return List.copyOf(registry.values());
    }

    /** The published members, by id. */
    public List<Member> members() {
        return List.copyOf(members.values());
    }

    /** The auth state (its {@link AuthStore#state()} may be read from any thread). */
    public AuthStore auth() {
        return auth;
    }

    public long revision() {
        return store.revision();
    }

    /** The log time of the last applied command (see {@link LogClock}). */
    public long nowMs() {
        return clock.nowMs();
    }
}
