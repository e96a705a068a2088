package io.rota.raft.sim;

/** A safety property of Raft failed in a simulated run. */
public final class InvariantViolation extends RuntimeException {

    public InvariantViolation(String message) {
        super(message);
    }
}
