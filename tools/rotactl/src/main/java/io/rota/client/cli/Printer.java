package io.rota.client.cli;

import io.rota.client.DeleteResult;
import io.rota.client.GetResult;
import io.rota.client.Lease;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.Member;
import io.rota.client.MemberStatus;
import io.rota.client.PutResult;
import io.rota.client.TxnResult;
import io.rota.client.WatchEvent;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.OnceStatus;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;

/**
 * Writes command results to stdout in one {@link Format}. Every method flushes, so a long-running command
 * (watch, lease keep-alive) shows each result as it comes.
 */
interface Printer {

    /** The {@code -w/--write-out} formats. */
    enum Format {
        /** etcdctl's plain text: one value per line. */
        SIMPLE,
        /** One JSON object per result, on one line. */
        JSON,
        /** Bordered columns with a header for listings; other results as SIMPLE. */
        TABLE;

        /** A printer to {@code out}; {@code hex}: keys and values as hex (simple, table; JSON has base64). */
        Printer on(PrintWriter out, boolean hex) {
            return switch (this) {
                case SIMPLE -> new SimplePrinter(out, hex);
                case JSON -> new JsonPrinter(out);
                case TABLE -> new TablePrinter(out, hex);
            };
        }
    }

    /** How a get prints its keys: all fields, keys only, values only, or the count only. */
    enum GetView {
        /** Key and value (simple: key line, then value line). */
        FULL,
        /** Keys without values. */
        KEYS_ONLY,
        /** Values without keys. */
        VALUES_ONLY,
        /** The number of matching keys. */
        COUNT_ONLY
    }

    /** One row of {@code endpoint status}: the member's status, or why it did not answer. */
    record StatusRow(String endpoint, MemberStatus status, String error) {
    }

    /** One row of {@code endpoint hashkv}: the member's hash, or why it did not answer. */
    record HashRow(String endpoint, io.rota.client.KvHash hash, String error) {
    }

    /**
     * One check of {@code check perf}.
     *
     * @param name    what was measured, e.g. "Throughput"
     * @param passed  whether it met its threshold
     * @param message the measurement and the threshold, e.g. "Throughput is 150 writes/s"
     */
    record Check(String name, boolean passed, String message) {
    }

    /** One row of {@code endpoint health}: how long its linearizable read took, or why it failed. */
    record HealthRow(String endpoint, Duration took, String error) {
    }

    /** A put: {@code OK}, and the previous key if asked for and there was one. */
    void put(PutResult result, boolean withPrevKv);

    /** A get: the keys found, as {@code view} says. */
    void get(GetResult result, GetView view);

    /** A delete: the number deleted, and the deleted keys if asked for. */
    void delete(DeleteResult result, boolean withPrevKvs);

    /** A transaction: which branch ran, then each of its results. */
    void txn(TxnResult result);

    /** One watch event (with its previous key if the watch asked for it). */
    void watchEvent(WatchEvent event);

    /** A watch's progress notification: every event up to {@code revision} was printed. */
    void watchProgress(long revision);

    /** Each member's hash of its key-value state ({@code endpoint hashkv}). */
    void hashKv(List<HashRow> rows);

    /** rotactl's version and each member's ({@code version}). */
    void version(String client, List<StatusRow> members);

    /** The results of {@code check perf}: one line per check, then the verdict. */
    void checkPerf(List<Check> checks);

    /** A granted lease: its id and TTL. */
    void leaseGranted(Lease lease);

    /** A revoked lease. */
    void leaseRevoked(long id);

    /** One successful keep-alive. */
    void leaseRenewed(long id, Duration ttl);

    /** A lease's granted and remaining TTL, and its keys if asked for. */
    void leaseTimeToLive(LeaseTimeToLive ttl, boolean withKeys);

    /** The live leases. */
    void leaseList(List<Long> ids);

    /** One status row per endpoint, the ones that did not answer included. */
    void endpointStatus(List<StatusRow> rows);

    /** One health row per endpoint. */
    void endpointHealth(List<HealthRow> rows);

    /** The members that published their addresses (a server without the member list of issue 13). */
    void memberList(List<Member> members);

    /**
     * The configuration's members as the leader sees them: etcd's columns (STATUS is "started" once the
     * member published its client address, else "unstarted"), plus, with {@code progress}, leader,
     * matchIndex, lag and whether caught up.
     */
    void clusterMembers(List<io.rota.client.ClusterMember> members, boolean progress, String clusterId);

    /** A membership change done: what happened (one line), member {@code id}, and what to do next. */
    void memberChanged(String done, long id, List<String> next);

    /**
     * {@code member add}: as {@link #memberChanged}; JSON adds the new member's record, the cluster id and the
     * {@code --initial-cluster} it starts with, so a script need not read the printed command (design HS67).
     */
    void memberAdded(io.rota.client.AddedMember added, String clientAddress, String done, List<String> next);

    /**
     * A learner promoted by {@code member add --promote-when-caught-up}: as {@link #memberChanged} without next
     * steps; JSON adds the member's record as the leader lists it after the promotion (design HS68).
     */
    void memberPromoted(String done, io.rota.client.ClusterMember member);

    /** A lock now held: its name, holder key, fencing token and lease. */
    void lockHeld(String name, String key, long fencingToken, long leaseId);

    /** The leader of election {@code election}: key, value, epoch; null when nobody leads. */
    void leader(String election, Leader leader);

    /** The once-record {@code key} as stored; null when there is none. */
    void onceStatus(String key, OnceStatus status);

    /** A once-record that is DONE, so its command was not run again. */
    void onceAlreadyDone(OnceStatus status);

    /** A singleton job's recorded attempts, oldest first. */
    void jobHistory(List<JobRun> runs);

    /** The jobs under a prefix, one row each: the name and its latest recorded attempt. */
    void jobList(List<JobRun> latest);

    // ---- backups, alarms and compaction (issue 18) ----------------------------------------------------

    /** {@code snapshot save} ({@code file} set) or {@code snapshot status} ({@code file} null): what a backup holds. */
    void snapshot(io.rota.client.SnapshotSummary summary, String file);

    /** {@code alarm list} / {@code alarm disarm}: the alarms armed (after the disarm). */
    void alarms(String done, List<io.rota.client.Alarm> alarms);

    /** {@code compaction REV}: the history is compacted at {@code revision}. */
    void compacted(long revision);

    // ---- users, roles and auth ----------------------------------------------------------------------

    /** A user, role or auth change done: one sentence saying what, and what to do next if anything. */
    void authChanged(String done);

    /** {@code user list}: the users, sorted by name, with their roles. */
    void userList(List<io.rota.client.Auth.User> users);

    /** {@code user get}: one user and its roles. */
    void user(io.rota.client.Auth.User user);

    /** {@code role list}: the roles, sorted by name. */
    void roleList(List<String> roles);

    /** {@code role get}: a role's permissions ({@code root} is built in and may do anything). */
    void role(String role, List<io.rota.client.Auth.Permission> permissions);

    /** {@code auth status}: whether auth is on, and the auth revision. */
    void authStatus(io.rota.client.Auth.Status status);
}
