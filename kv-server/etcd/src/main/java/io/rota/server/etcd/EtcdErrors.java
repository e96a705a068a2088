package io.rota.server.etcd;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rota.proto.Error;

/**
 * Rota's typed errors as etcd's gRPC statuses. etcd clients match the status message against etcd's own
 * strings (clientv3's rpctypes, jetcd's error codes) to decide what to do — retry elsewhere, re-grant a
 * lease, restart a watch from a newer revision — so where etcd has an error for the case, its code and its
 * exact message are used; otherwise the message is Rota's, prefixed "etcdserver: " as etcd's are.
 */
final class EtcdErrors {

    /** etcd's rpctypes messages, as clients match them. */
    static final String COMPACTED = "etcdserver: mvcc: required revision has been compacted";
    static final String FUTURE_REV = "etcdserver: mvcc: required revision is a future revision";
    static final String LEASE_NOT_FOUND = "etcdserver: requested lease not found";
    static final String LEASE_EXISTS = "etcdserver: lease already exists";
    static final String KEY_NOT_FOUND = "etcdserver: key not found";
    static final String EMPTY_KEY = "etcdserver: key is not provided";
    static final String DUPLICATE_KEY = "etcdserver: duplicate key given in txn request";
    static final String TOO_MANY_OPS = "etcdserver: too many operations in txn request";
    static final String REQUEST_TOO_LARGE = "etcdserver: request is too large";
    static final String NOT_LEADER = "etcdserver: not leader";
    static final String NO_LEADER = "etcdserver: no leader";
    static final String TIMEOUT = "etcdserver: request timed out";
    static final String NO_SPACE = "etcdserver: mvcc: database space exceeded";
    static final String MEMBER_NOT_FOUND = "etcdserver: member not found";
    static final String MEMBER_EXISTS = "etcdserver: member ID already exist";
    static final String PEER_URL_EXISTS = "etcdserver: Peer URLs already exists";
    static final String MEMBER_NOT_LEARNER = "etcdserver: can only promote a learner member";
    static final String NOT_ENOUGH_STARTED_MEMBERS = "etcdserver: re-configuration failed due to not enough started members";
    static final String LEARNER_NOT_READY = "etcdserver: can only promote a learner member which is in sync with leader";
    static final String BAD_MEMBER_URLS = "etcdserver: given member URLs are invalid";
    static final String USER_EXISTS = "etcdserver: user name already exists";
    static final String USER_NOT_FOUND = "etcdserver: user name not found";
    static final String ROLE_EXISTS = "etcdserver: role name already exists";
    static final String ROLE_NOT_FOUND = "etcdserver: role name not found";
    static final String ROOT_USER_MISSING = "etcdserver: root user does not exist";
    static final String ROLE_NOT_GRANTED = "etcdserver: role is not granted to the user";
    static final String PERMISSION_NOT_GRANTED = "etcdserver: permission is not granted to the role";
    static final String INVALID_AUTH_MGMT = "etcdserver: invalid auth management";

    private EtcdErrors() {
    }

    static StatusRuntimeException of(Error e) {
        String m = bounded(e.getMessage());
        return switch (e.getCode()) {
            case COMPACTED -> Status.OUT_OF_RANGE.withDescription(COMPACTED).asRuntimeException();
            case LEASE_NOT_FOUND -> Status.NOT_FOUND.withDescription(LEASE_NOT_FOUND).asRuntimeException();
            case NOT_LEADER -> Status.UNAVAILABLE.withDescription(NOT_LEADER).asRuntimeException();
            case TIMEOUT -> Status.UNAVAILABLE.withDescription(TIMEOUT).asRuntimeException();
            case UNAVAILABLE -> Status.UNAVAILABLE.withDescription(e.getReason() == Error.Reason.NO_LEADER ? NO_LEADER
                    : "etcdserver: " + m).asRuntimeException();
            case REQUEST_TOO_LARGE -> invalid(e.getReason() == Error.Reason.TXN_TOO_MANY_OPS ? TOO_MANY_OPS
                    : REQUEST_TOO_LARGE);
            case INVALID_ARGUMENT -> invalidArgument(e.getReason(), m);
            case NO_SPACE -> Status.RESOURCE_EXHAUSTED.withDescription(NO_SPACE).asRuntimeException();
            case PERMISSION_DENIED -> Status.PERMISSION_DENIED.withDescription("etcdserver: permission denied")
                    .asRuntimeException();
            case AUTH_FAILED -> Status.INVALID_ARGUMENT
                    .withDescription("etcdserver: authentication failed, invalid user ID or password").asRuntimeException();
            case INVALID_AUTH_TOKEN -> Status.UNAUTHENTICATED.withDescription("etcdserver: invalid auth token")
                    .asRuntimeException();
            case AUTH_NOT_ENABLED -> Status.FAILED_PRECONDITION
                    .withDescription("etcdserver: authentication is not enabled").asRuntimeException();
            case MEMBERSHIP_REFUSED -> membershipRefused(e);
            case SESSION_EXPIRED, OUTCOME_UNKNOWN, CODE_UNSPECIFIED, UNRECOGNIZED ->
                    Status.FAILED_PRECONDITION.withDescription("etcdserver: " + m).asRuntimeException();
        };
    }

    /**
     * Rota's INVALID_ARGUMENT covers cases etcd tells apart; the error's reason (set where the state machine
     * and the auth store refuse, see KvStore, WriteTxn, CoordinationStateMachine and AuthStore) says which,
     * never the message (design HS30). EtcdApiTest, EtcdAuthTest and EtcdErrorsTest cover each row.
     */
    private static StatusRuntimeException invalidArgument(Error.Reason reason, String m) {
        return switch (reason) {
            case FUTURE_REVISION -> Status.OUT_OF_RANGE.withDescription(FUTURE_REV).asRuntimeException();
            case LEASE_EXISTS -> Status.FAILED_PRECONDITION.withDescription(LEASE_EXISTS).asRuntimeException();
            case EMPTY_KEY -> invalid(EMPTY_KEY);
            case IGNORED_KEY_MISSING -> invalid(KEY_NOT_FOUND);
            case DUPLICATE_KEY -> invalid(DUPLICATE_KEY);
            case USER_EXISTS -> failedPrecondition(USER_EXISTS);
            case USER_NOT_FOUND -> failedPrecondition(USER_NOT_FOUND);
            case ROLE_EXISTS -> failedPrecondition(ROLE_EXISTS);
            case ROLE_NOT_FOUND -> failedPrecondition(ROLE_NOT_FOUND);
            case ROOT_USER_MISSING -> failedPrecondition(ROOT_USER_MISSING);
            case ROLE_NOT_GRANTED -> failedPrecondition(ROLE_NOT_GRANTED);
            case PERMISSION_NOT_GRANTED -> failedPrecondition(PERMISSION_NOT_GRANTED);
            case ROOT_PROTECTED -> invalid(INVALID_AUTH_MGMT);
            case REASON_UNSPECIFIED, NO_LEADER, TXN_TOO_MANY_OPS, NO_SUCH_WATCH, UNRECOGNIZED ->
                    invalid("etcdserver: " + m);
        };
    }

    private static StatusRuntimeException failedPrecondition(String etcd) {
        return Status.FAILED_PRECONDITION.withDescription(etcd).asRuntimeException();
    }

    /** A refused membership change as etcd's membership errors, by the refusal's reason (EtcdApiTest). */
    private static StatusRuntimeException membershipRefused(Error e) {
        return switch (e.getMembershipRefusal()) {
            case "NOT_A_MEMBER" -> Status.NOT_FOUND.withDescription(MEMBER_NOT_FOUND).asRuntimeException();
            case "ALREADY_MEMBER" -> Status.FAILED_PRECONDITION.withDescription(MEMBER_EXISTS).asRuntimeException();
            case "NAME_TAKEN" -> Status.FAILED_PRECONDITION.withDescription(PEER_URL_EXISTS).asRuntimeException();
            case "NOT_A_LEARNER" -> Status.FAILED_PRECONDITION.withDescription(MEMBER_NOT_LEARNER).asRuntimeException();
            case "LEARNER_BEHIND", "LEARNER_NOT_RESPONDING" ->
                    Status.FAILED_PRECONDITION.withDescription(LEARNER_NOT_READY).asRuntimeException();
            // The etcd door is always strict (no force), as etcd is with --strict-reconfig-check (design MF2).
            case "QUORUM_AT_RISK" -> Status.FAILED_PRECONDITION.withDescription(NOT_ENOUGH_STARTED_MEMBERS)
                    .asRuntimeException();
            default -> Status.FAILED_PRECONDITION.withDescription("etcdserver: " + bounded(e.getMessage()))
                    .asRuntimeException();
        };
    }

    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(bounded(message)).asRuntimeException();
    }

    /** Longest message a status carries: it travels in an HTTP/2 trailer, which the client bounds (8 KiB). */
    static final int MAX_DESCRIPTION = 512;

    /**
     * {@code message}, cut to {@link #MAX_DESCRIPTION} characters: a message may echo what the caller sent (a
     * 10,000-character name), and a trailer over the client's bound fails the call with an HTTP/2 error
     * instead of the typed status (issue 30, found by WellFormedFuzzProcessTest seed 7).
     */
    static String bounded(String message) {
        return message.length() <= MAX_DESCRIPTION ? message
                : message.substring(0, MAX_DESCRIPTION) + "… (" + (message.length() - MAX_DESCRIPTION) + " more characters)";
    }

    static StatusRuntimeException unimplemented(String message) {
        return Status.UNIMPLEMENTED.withDescription(message).asRuntimeException();
    }

    /** A failure that is not a typed error (a bug, a member stopping): UNAVAILABLE, so clients try another member. */
    static StatusRuntimeException internal(Throwable e) {
        if (e instanceof StatusRuntimeException s) {
            return s;
        }
        if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
            return internal(e.getCause());
        }
        return Status.UNAVAILABLE.withDescription("etcdserver: internal error: " + e).asRuntimeException();
    }
}
