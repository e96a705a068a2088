package io.rota.raft.node;

/**
 * Told of this member's role and leader changes, pushed by the {@link RaftDriver} (hashicorp/raft's
 * {@code LeaderCh} and {@code RegisterObserver}) instead of being discovered by polling its status.
 *
 * <p>Registered with {@link RaftDriver#addRoleListener}: first the role at registration, then every
 * change, each as a task on the executor given there.
 */
@FunctionalInterface
public interface RoleListener {

    void onRoleChange(RoleChange change);
}
