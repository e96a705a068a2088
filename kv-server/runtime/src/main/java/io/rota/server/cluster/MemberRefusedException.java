package io.rota.server.cluster;

/**
 * This member must not run as it was started, and starting it again unchanged is refused again: its data
 * directory belongs to another member or cluster, or the identity file that says whose it is was edited.
 * Unlike a failure of the world (a port in use, a disk error), waiting does not fix it; the operator must.
 * {@code rota server} exits with status 3 for it, the status supervisors are told not to restart
 * (docs/operations.md, "Exit status").
 */
public final class MemberRefusedException extends IllegalStateException {

    public MemberRefusedException(String message) {
        super(message);
    }

    public MemberRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
