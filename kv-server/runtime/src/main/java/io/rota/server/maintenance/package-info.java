/**
 * Leader-side upkeep of the replicated state (issue 18): the space quota's NOSPACE alarm
 * ({@link io.rota.server.maintenance.SpaceQuota}) and auto-compaction of the revision history
 * ({@link io.rota.server.maintenance.AutoCompaction}). Both only decide on the leader and propose a command;
 * the state machine applies it on every member alike.
 */
package io.rota.server.maintenance;
