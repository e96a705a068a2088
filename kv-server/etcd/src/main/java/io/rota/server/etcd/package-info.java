/**
 * The etcd front door: etcd's v3 gRPC API (KV, Watch, Lease, Maintenance, Cluster) served on
 * {@code --listen-etcd}. One state machine, two front doors: every call is translated to the native
 * {@link io.rota.proto.Frame} and answered by the same {@link io.rota.server.api.RequestRouter} (writes
 * proposed or forwarded to the leader, linearizable reads through ReadIndex, §6.4) and the same
 * {@link io.rota.server.watch.WatchHub} as the native protocol; the answer is translated back, with etcd's
 * header and etcd's error statuses ({@link EtcdErrors}). etcd's v3lock and v3election are served too
 * ({@link LockService}, {@link ElectionService}, both queueing through {@link Turn}). See docs/etcd-compat.md
 * and design.md Y1–Y9, Y10–Y15.
 */
package io.rota.server.etcd;
