package io.rota.server.kv;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthResponse;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.LeaseRevokeResponse;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.SessionKeepAliveResponse;
import io.rota.proto.SessionRef;
import io.rota.raft.core.LogText;
import io.rota.server.auth.AuthException;
import io.rota.server.auth.AuthState;
import io.rota.server.auth.AuthStore;
import io.rota.server.lease.LogClock;
import io.rota.server.session.Session;
import io.rota.server.session.SessionTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;

/**
 * Applies one command entry: the log clock and session expiry first, then authorization, then the client's
 * session (§6.3: a retried sequence gets its remembered answer and is not applied again), admission and the
 * space quota, and last the command's own part ({@link KeyWrites}, {@link LeaseCommands}, {@link MemberRegistry},
 * {@link QuotaAndAlarms}, the auth store). Total (issue 30): every entry is applied or refused, the same on
 * every member. Driver thread only.
 */
final class Dispatcher {

    /** The state machine's logger: its lines are named as they were before the split (design HS70). */
    private static final Logger log = LoggerFactory.getLogger(CoordinationStateMachine.class);
    /** Refusals at apply come from clients' requests, at will: their lines are bounded. */
    private static final RefusalLog refusals = new RefusalLog(log, 10);

    private final LogClock clock;
    private final SessionTable sessions;
    private final ApplyAuthorization authorization;
    private final QuotaAndAlarms quota;
    private final KeyWrites keys;
    private final LeaseCommands leases;
    private final MemberRegistry members;
    private final AuthStore auth;
    private final KvStore store;
    private final Effects effects;
    /** Whether the command being applied advanced {@link #clock} by its own stamp (see LeaseCommands). */
    private boolean stampCounted;

    Dispatcher(LogClock clock, SessionTable sessions, ApplyAuthorization authorization, QuotaAndAlarms quota,
               KeyWrites keys, LeaseCommands leases, MemberRegistry members, AuthStore auth, KvStore store,
               Effects effects) {
        this.clock = clock;
        this.sessions = sessions;
        this.authorization = authorization;
        this.quota = quota;
        this.keys = keys;
        this.leases = leases;
        this.members = members;
        this.auth = auth;
        this.store = store;
        this.effects = effects;
    }

    /**
     * Apply is total (issue 30): every entry is applied or refused, on every member alike. A refusal is a
     * {@link StoreException}; anything else escaping a command is a bug in the state machine, and it is still a
     * refusal — the same on every member, since apply is deterministic — logged with the entry's index and
     * command, rather than an exception that would stop every member on every replay of the entry.
     */
    CommandResult apply(long index, long term, byte[] data) {
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
        StoreException refused = authorization.refusal(cmd);
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

    private CommandResult execute(long index, Command cmd) {
        try {
            Admission.require(cmd);
            quota.requireSpaceFor(cmd);
            CommandResult.Builder out = CommandResult.newBuilder();
            switch (cmd.getOpCase()) {
                case PUT -> out.setPut(keys.put(cmd.getPut()));
                case DELETE_RANGE -> out.setDeleteRange(keys.delete(cmd.getDeleteRange()));
                case TXN -> out.setTxn(keys.txn(cmd.getTxn()));
                case LEASE_GRANT -> out.setLeaseGrant(leases.grant(index, cmd, stampCounted));
                case LEASE_REVOKE -> out.setLeaseRevoke(
                        LeaseRevokeResponse.newBuilder().setHeader(leases.revoke(cmd.getLeaseRevoke().getID())));
                case LEASE_EXPIRE -> out.setLeaseExpire(leases.expire(cmd.getLeaseExpire()));
                case LEASE_KEEP_ALIVE -> out.setLeaseKeepAlive(
                        leases.keepAlive(index, cmd.getLeaseKeepAlive().getID(), stampCounted));
                case LEASE_CHECKPOINT -> out.setLeaseCheckpoint(leases.checkpoint(cmd.getLeaseCheckpoint()));
                case REGISTER_SESSION -> out.setRegisterSession(register(index, cmd));
                case SESSION_KEEP_ALIVE -> out.setSessionKeepAlive(keepAliveSession(cmd));
                case PUBLISH_MEMBER -> out.setPublishMember(members.publish(cmd.getPublishMember().getMember()));
                case REGISTER_MEMBER -> out.setRegisterMember(members.register(cmd.getRegisterMember()));
                case RETIRE_MEMBER -> out.setRetireMember(members.retire(cmd.getRetireMember().getId()));
                case UPDATE_MEMBER -> out.setUpdateMember(members.update(cmd.getUpdateMember()));
                case ALARM -> out.setAlarm(quota.alarm(cmd.getAlarm()));
                case COMPACTION -> out.setCompaction(keys.compact(cmd.getCompaction()));

                case AUTH -> out.setAuth(applyAuth(cmd.getAuth()));
                case OP_NOT_SET -> throw StoreException.invalid("command without an operation");
            }
            return out.build();
        } catch (StoreException e) {
            return error(e);
        }
    }

    /** An auth change (issue 15); a refusal is the same typed error as the store's. */
    private AuthResponse applyAuth(AuthCommand change) {
        AuthState before = auth.state();
        try {
            return auth.apply(change).toBuilder().setHeader(store.header()).build();
        } catch (AuthException e) {
            throw new StoreException(e.error());
        } finally {
            if (auth.state() != before) {   // a new state: watches made under the old one are re-checked
                effects.add(new Effects.AuthChanged(auth.state()));
            }
        }
    }

    /**
     * The client id is the index of the registering entry: unique and the same on every replica (§6.3). The
     * session belongs to the command's caller; its secret was chosen by the proposing leader (issue 31).
     */
    private RegisterSessionResponse register(long index, Command cmd) {
        ByteString secret = cmd.getRegisterSession().getSecret();
        // Past its bound, a user's own least recently active session goes, never another's (issue 33).
        sessions.register(index, cmd.getCaller(), secret, clock.nowMs(),
                authorization.boundedCaller(cmd) ? cmd.getMaxSessionsPerUser() : 0);
        return RegisterSessionResponse.newBuilder().setHeader(store.header()).setClientId(index)
                .setSessionTtlMs(sessions.ttlMs()).setRememberedResponses(sessions.window()).setSecret(secret).build();
    }

    private SessionKeepAliveResponse keepAliveSession(Command cmd) {
        long clientId = cmd.getSessionKeepAlive().getClientId();
        Session session = sessions.get(clientId);
        if (session == null || !isOwn(session, cmd.getCaller(), cmd.getSessionKeepAlive().getSecret())) {
            throw unknownSession(clientId);
        }
        sessions.touch(session, clock.nowMs());
        return SessionKeepAliveResponse.newBuilder().setHeader(store.header()).build();
    }

    private static CommandResult error(StoreException e) {
        return CommandResult.newBuilder().setError(e.error()).build();
    }
}
