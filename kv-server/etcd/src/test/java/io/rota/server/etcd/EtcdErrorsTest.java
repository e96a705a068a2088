package io.rota.server.etcd;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rota.proto.Error;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The etcd door answers Rota's refusals by their code and reason, never by their message (design HS30): each
 * row is checked with a message that says nothing etcd-like, and a message that once decided the answer is
 * answered as a plain one when no reason comes with it.
 */
class EtcdErrorsTest {

    private record Answer(Error.Code code, Status.Code status, String description) {
    }

    private static final String REWORDED = "a message reworded beyond recognition";

    @Test
    @DisplayName("every reason gives etcd's status and words, whatever the message says")
    void reasonDecidesNotMessage() {
        Map<Error.Reason, Answer> rows = new EnumMap<>(Error.Reason.class);
        rows.put(Error.Reason.NO_LEADER, new Answer(Error.Code.UNAVAILABLE, Status.Code.UNAVAILABLE,
                EtcdErrors.NO_LEADER));
        rows.put(Error.Reason.TXN_TOO_MANY_OPS, new Answer(Error.Code.REQUEST_TOO_LARGE,
                Status.Code.INVALID_ARGUMENT, EtcdErrors.TOO_MANY_OPS));
        rows.put(Error.Reason.FUTURE_REVISION, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.OUT_OF_RANGE,
                EtcdErrors.FUTURE_REV));
        rows.put(Error.Reason.LEASE_EXISTS, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION,
                EtcdErrors.LEASE_EXISTS));
        rows.put(Error.Reason.EMPTY_KEY, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.INVALID_ARGUMENT,
                EtcdErrors.EMPTY_KEY));
        rows.put(Error.Reason.IGNORED_KEY_MISSING, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.INVALID_ARGUMENT, EtcdErrors.KEY_NOT_FOUND));
        rows.put(Error.Reason.DUPLICATE_KEY, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.INVALID_ARGUMENT,
                EtcdErrors.DUPLICATE_KEY));
        rows.put(Error.Reason.USER_EXISTS, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION,
                "etcdserver: user name already exists"));
        rows.put(Error.Reason.USER_NOT_FOUND, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, "etcdserver: user name not found"));
        rows.put(Error.Reason.ROLE_EXISTS, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION,
                "etcdserver: role name already exists"));
        rows.put(Error.Reason.ROLE_NOT_FOUND, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, "etcdserver: role name not found"));
        rows.put(Error.Reason.ROOT_USER_MISSING, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, "etcdserver: root user does not exist"));
        rows.put(Error.Reason.ROLE_NOT_GRANTED, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, "etcdserver: role is not granted to the user"));
        rows.put(Error.Reason.PERMISSION_NOT_GRANTED, new Answer(Error.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION, "etcdserver: permission is not granted to the role"));
        rows.put(Error.Reason.ROOT_PROTECTED, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.INVALID_ARGUMENT,
                "etcdserver: invalid auth management"));
        rows.put(Error.Reason.NO_SUCH_WATCH, new Answer(Error.Code.INVALID_ARGUMENT, Status.Code.INVALID_ARGUMENT,
                "etcdserver: " + REWORDED));
        for (Error.Reason reason : Error.Reason.values()) {
            if (reason == Error.Reason.REASON_UNSPECIFIED || reason == Error.Reason.UNRECOGNIZED) {
                continue;
            }
            Answer row = rows.get(reason);
            StatusRuntimeException s = EtcdErrors.of(Error.newBuilder().setCode(row.code()).setReason(reason)
                    .setMessage(REWORDED).build());
            assertEquals(row.status(), s.getStatus().getCode(), "status of " + reason);
            assertEquals(row.description(), s.getStatus().getDescription(), "description of " + reason);
        }
    }

    @Test
    @DisplayName("a message that once decided the answer is a plain refusal without its reason")
    void messageAloneDecidesNothing() {
        Map<String, Error.Code> messages = Map.of(
                "no leader is known; the cluster may be electing one", Error.Code.UNAVAILABLE,
                "revision 9 is in the future (current 3)", Error.Code.INVALID_ARGUMENT,
                "lease 7 already exists", Error.Code.INVALID_ARGUMENT,
                "key is empty", Error.Code.INVALID_ARGUMENT,
                "user 'ann' already exists", Error.Code.INVALID_ARGUMENT);
        messages.forEach((message, code) -> {
            Status s = EtcdErrors.of(Error.newBuilder().setCode(code).setMessage(message).build()).getStatus();
            assertEquals(code == Error.Code.UNAVAILABLE ? Status.Code.UNAVAILABLE : Status.Code.INVALID_ARGUMENT,
                    s.getCode(), message);
            assertEquals("etcdserver: " + message, s.getDescription(), message);
        });
        Status tooLarge = EtcdErrors.of(Error.newBuilder().setCode(Error.Code.REQUEST_TOO_LARGE)
                .setMessage("more than 128 compares and ops in a txn").build()).getStatus();
        assertEquals(EtcdErrors.REQUEST_TOO_LARGE, tooLarge.getDescription());
    }
}
