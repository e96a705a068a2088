package io.rota.server.api;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.rota.proto.AlarmCommand;
import io.rota.proto.AlarmRequest;
import io.rota.proto.Command;
import io.rota.proto.ClockStamp;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.ResponseHeader;

/**
 * Translations between the client envelope ({@link Frame}) and the replicated {@link Command} /
 * {@link CommandResult}: one request kind maps to one command kind, one result kind to one response kind.
 */
public final class Frames {

    private Frames() {
    }

    /** Whether the frame's request changes replicated state (and so goes to the leader). */
    public static boolean isWrite(Frame f) {
        return switch (f.getBodyCase()) {
            case PUT_REQUEST, DELETE_RANGE_REQUEST, TXN_REQUEST, LEASE_GRANT_REQUEST, LEASE_REVOKE_REQUEST,
                 LEASE_KEEP_ALIVE_REQUEST, REGISTER_SESSION_REQUEST, SESSION_KEEP_ALIVE_REQUEST,
                 PUBLISH_MEMBER_REQUEST, COMPACTION_REQUEST -> true;
            // Issue 18: disarming an alarm is replicated; listing is a read, and arming is the members' alone.
            case ALARM_REQUEST -> f.getAlarmRequest().getAction() == AlarmRequest.AlarmAction.DEACTIVATE;
            default -> false;
        };
    }

    /** The command a write frame asks for, with the proposing leader's log-clock stamp. */
    public static Command command(Frame f, ClockStamp stamp) {
        Command.Builder c = Command.newBuilder().setStamp(stamp);
        if (f.hasSession()) {
            c.setSession(f.getSession());
        }
        switch (f.getBodyCase()) {
            case PUT_REQUEST -> c.setPut(f.getPutRequest());
            case DELETE_RANGE_REQUEST -> c.setDeleteRange(f.getDeleteRangeRequest());
            case TXN_REQUEST -> c.setTxn(f.getTxnRequest());
            case LEASE_GRANT_REQUEST -> c.setLeaseGrant(f.getLeaseGrantRequest());
            case LEASE_REVOKE_REQUEST -> c.setLeaseRevoke(f.getLeaseRevokeRequest());
            case LEASE_KEEP_ALIVE_REQUEST -> c.setLeaseKeepAlive(f.getLeaseKeepAliveRequest());
            case REGISTER_SESSION_REQUEST -> c.setRegisterSession(f.getRegisterSessionRequest());
            case SESSION_KEEP_ALIVE_REQUEST -> c.setSessionKeepAlive(f.getSessionKeepAliveRequest());
            case PUBLISH_MEMBER_REQUEST -> c.setPublishMember(f.getPublishMemberRequest());
            case COMPACTION_REQUEST -> c.setCompaction(f.getCompactionRequest());
            // By number: an enum value this version does not know is apply's to refuse, not a throw here.
            case ALARM_REQUEST -> c.setAlarm(AlarmCommand.newBuilder()
                    .setActionValue(f.getAlarmRequest().getActionValue())
                    .setMemberId(f.getAlarmRequest().getMemberId()).setAlarmValue(f.getAlarmRequest().getAlarmValue()));
            default -> throw new IllegalArgumentException("not a write: " + f.getBodyCase());
        }
        return c.build();
    }

    /** The response frame for a command's result (the caller sets the call id). */
    public static Frame response(CommandResult r) {
        Frame.Builder f = Frame.newBuilder();
        switch (r.getResultCase()) {
            case PUT -> f.setPutResponse(r.getPut());
            case DELETE_RANGE -> f.setDeleteRangeResponse(r.getDeleteRange());
            case TXN -> f.setTxnResponse(r.getTxn());
            case LEASE_GRANT -> f.setLeaseGrantResponse(r.getLeaseGrant());
            case LEASE_REVOKE -> f.setLeaseRevokeResponse(r.getLeaseRevoke());
            case LEASE_KEEP_ALIVE -> f.setLeaseKeepAliveResponse(r.getLeaseKeepAlive());
            case REGISTER_SESSION -> f.setRegisterSessionResponse(r.getRegisterSession());
            case SESSION_KEEP_ALIVE -> f.setSessionKeepAliveResponse(r.getSessionKeepAlive());
            case PUBLISH_MEMBER -> f.setPublishMemberResponse(r.getPublishMember());
            case ALARM -> f.setAlarmResponse(r.getAlarm());
            case COMPACTION -> f.setCompactionResponse(r.getCompaction());

            case AUTH -> f.setAuthResponse(r.getAuth());
            case ERROR -> f.setError(r.getError());
            default -> f.setError(error(Error.Code.INVALID_ARGUMENT, "no response for " + r.getResultCase()));
        }
        return f.build();
    }

    public static Frame error(long callId, Error error) {
        return Frame.newBuilder().setCallId(callId).setError(error).build();
    }

    public static Error error(Error.Code code, String message) {
        return Error.newBuilder().setCode(code).setMessage(message).build();
    }

    /**
     * Fill the Raft fields of the response's header (etcd: every response carries revision, raft term and
     * member id). The revision was set by the state machine; error frames have no header.
     */
    public static Frame withHeader(Frame f, long raftTerm, long memberId) {
        if (f.getBodyCase() == Frame.BodyCase.BODY_NOT_SET || f.hasError()) {
            return f;
        }
        FieldDescriptor bodyField = Frame.getDescriptor().findFieldByNumber(f.getBodyCase().getNumber());
        Message body = (Message) f.getField(bodyField);
        FieldDescriptor headerField = body.getDescriptorForType().findFieldByName("header");
        if (headerField == null) {
            return f;
        }
        ResponseHeader header = ((ResponseHeader) body.getField(headerField)).toBuilder()
                .setRaftTerm(raftTerm).setMemberId(memberId).build();
        Message withHeader = body.toBuilder().setField(headerField, header).build();
        return f.toBuilder().setField(bodyField, withHeader).build();
    }
}
