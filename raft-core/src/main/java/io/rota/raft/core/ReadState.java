package io.rota.raft.core;

/**
 * A read that may be served (§6.4): once the state machine has applied up to {@code readIndex}, a read
 * issued with {@code context} sees every write committed before the read began.
 */
public record ReadState(long context, long readIndex) {
}
