/**
 * Disaster recovery from a backup file (issue 18): {@link io.rota.server.backup.BackupFile} reads and checks
 * one, {@link io.rota.server.backup.Restore} builds a data directory of a new cluster from it (what
 * {@code rota snapshot restore} runs, as etcdutl's). Taking a backup is the client port's
 * ({@code io.rota.server.api.SnapshotStream}).
 */
package io.rota.server.backup;
