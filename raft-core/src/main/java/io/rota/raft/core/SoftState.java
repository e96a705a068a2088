package io.rota.raft.core;

/** Volatile facts the runtime reports and routes by; never persisted. */
public record SoftState(Role role, long leaderId, long currentTerm) {
}
