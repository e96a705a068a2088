/**
 * Durable storage for a Raft node: the log, the hard state and snapshot files.
 *
 * <p>The core ({@link io.rota.raft.core}) does no I/O; it hands out a {@link io.rota.raft.core.Ready}
 * whose persist step this package implements ({@link io.rota.raft.storage.LogStore}), and reads back a
 * {@link io.rota.raft.core.PersistentState} when a node starts. See {@code docs/storage.md}.
 */
package io.rota.raft.storage;
