package io.rota.client.cli;

import io.rota.client.DeleteResult;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.Member;
import io.rota.client.OpResult;
import io.rota.client.PutResult;
import io.rota.client.TxnResult;
import io.rota.client.WatchEvent;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.OnceStatus;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import static io.rota.client.cli.Conversions.leaseHex;

/**
 * etcdctl's simple format: {@code OK}, the number deleted, key and value each on its own line. A key or value
 * with a newline, a control character or bytes that are not UTF-8 is escaped ({@link Bytes#display}), so each
 * stays on its one line.
 */
class SimplePrinter implements Printer {

    protected final PrintWriter out;
    /** {@code --hex}: keys and values as {@code \x6b\x65\x79}. */
    protected final boolean hex;

    SimplePrinter(PrintWriter out, boolean hex) {
        this.out = out;
        this.hex = hex;
    }

    /** A key or value as output shows it: escaped text, or hex with {@code --hex} (see {@link Bytes#display}). */
    protected final String show(byte[] bytes) {
        return Bytes.display(bytes, hex);
    }

    @Override
    public void put(PutResult result, boolean withPrevKv) {
        out.println("OK");
        if (withPrevKv && result.prevKv() != null) {
            kv(result.prevKv(), GetView.FULL);
        }
        out.flush();
    }

    @Override
    public void get(GetResult result, GetView view) {
        if (view == GetView.COUNT_ONLY) {
            out.println(result.count());
        }
        for (KeyValue kv : result.kvs()) {
            kv(kv, view);
        }
        out.flush();
    }

    @Override
    public void delete(DeleteResult result, boolean withPrevKvs) {
        out.println(result.deleted());
        if (withPrevKvs) {
            for (KeyValue kv : result.prevKvs()) {
                kv(kv, GetView.FULL);
            }
        }
        out.flush();
    }

    @Override
    public void txn(TxnResult result) {
        out.println(result.succeeded() ? "SUCCESS" : "FAILURE");
        for (OpResult r : result.responses()) {
            out.println();
            if (r instanceof PutResult) {
                out.println("OK");
            } else if (r instanceof GetResult g) {
                g.kvs().forEach(kv -> kv(kv, GetView.FULL));
            } else if (r instanceof DeleteResult d) {
                out.println(d.deleted());
            }
        }
        out.flush();
    }

    @Override
    public void watchEvent(WatchEvent event) {
        out.println(event.type());
        if (event.prevKv() != null) {
            kv(event.prevKv(), GetView.FULL);
        }
        kv(event.kv(), GetView.FULL);
        out.flush();
    }

    @Override
    public void watchProgress(long revision) {
        out.println("progress notify: " + revision);
        out.flush();
    }

    @Override
    public void hashKv(List<HashRow> rows) {
        for (HashRow r : rows) {
            out.println(r.hash() == null ? r.endpoint() + ", -, -, " + r.error()
                    : String.join(", ", r.endpoint(), Long.toString(r.hash().hash()),
                            Long.toString(r.hash().revision())));
        }
        out.flush();
    }

    @Override
    public void version(String client, List<StatusRow> members) {
        out.println("rotactl version: " + client);
        for (StatusRow r : members) {
            out.println(r.status() == null ? r.endpoint() + ": no answer (" + r.error() + ")"
                    : r.endpoint() + ": server version " + r.status().version()
                            + (r.status().name().isEmpty() ? "" : " (" + r.status().name() + ")"));
        }
        out.flush();
    }

    @Override
    public void checkPerf(List<Check> checks) {
        for (Check c : checks) {
            out.println((c.passed() ? "PASS: " : "FAIL: ") + c.message());
        }
        out.println(checks.stream().allMatch(Check::passed) ? "PASS" : "FAIL");
        out.flush();
    }

    @Override
    public void leaseGranted(Lease lease) {
        out.println("lease " + leaseHex(lease.id()) + " granted with TTL(" + lease.ttl().toSeconds() + "s)");
        out.flush();
    }

    @Override
    public void leaseRevoked(long id) {
        out.println("lease " + leaseHex(id) + " revoked");
        out.flush();
    }

    @Override
    public void leaseRenewed(long id, Duration ttl) {
        out.println("lease " + leaseHex(id) + " keepalived with TTL(" + ttl.toSeconds() + ")");
        out.flush();
    }

    @Override
    public void leaseTimeToLive(LeaseTimeToLive ttl, boolean withKeys) {
        String line = "lease " + leaseHex(ttl.id()) + " granted with TTL(" + ttl.grantedTtl().toSeconds()
                + "s), remaining(" + ttl.remaining().toSeconds() + "s)";
        if (withKeys) {
            line += ", attached keys(" + ttl.keys() + ")";
        }
        out.println(line);
        out.flush();
    }

    @Override
    public void leaseList(List<Long> ids) {
        out.println("found " + ids.size() + " leases");
        ids.forEach(id -> out.println(leaseHex(id)));
        out.flush();
    }

    @Override
    public void endpointStatus(List<StatusRow> rows) {
        for (StatusRow r : rows) {
            if (r.status() == null) {
                out.println(r.endpoint() + ", -, -, -, -, -, -, -, -, " + r.error());
            } else {
                var s = r.status();
                out.println(String.join(", ", r.endpoint(), Long.toString(s.memberId()), s.name(), s.version(),
                        Boolean.toString(s.isLeader()), Long.toString(s.raftTerm()), Long.toString(s.raftIndex()),
                        Long.toString(s.raftAppliedIndex()), Long.toString(s.revision()), String.join("; ", s.errors())));
            }
        }
        out.flush();
    }

    @Override
    public void endpointHealth(List<HealthRow> rows) {
        for (HealthRow r : rows) {
            out.println(r.error() == null
                    ? r.endpoint() + " is healthy: linearizable read took " + Conversions.format(r.took())
                    : r.endpoint() + " is unhealthy: " + r.error());
        }
        out.flush();
    }

    @Override
    public void memberList(List<Member> members) {
        for (Member m : members) {
            out.println(String.join(", ", Long.toString(m.id()), "started", m.name(), m.peerAddress(),
                    m.clientAddress(), "false"));
        }
        out.flush();
    }

    @Override
    public void clusterMembers(List<io.rota.client.ClusterMember> members, boolean progress, String clusterId) {
        for (io.rota.client.ClusterMember m : members) {
            String line = String.join(", ", Long.toString(m.id()), status(m), m.name(), m.peerAddress(),
                    m.clientAddress(), Boolean.toString(m.learner()));
            if (progress) {
                line += ", " + String.join(", ", Boolean.toString(m.leader()), Long.toString(m.matchIndex()),
                        Long.toString(m.lag()), Boolean.toString(m.caughtUp()));
            }
            out.println(line);
        }
        out.flush();
    }

    static String status(io.rota.client.ClusterMember m) {
        return m.clientAddress().isEmpty() ? "unstarted" : "started";
    }

    @Override
    public void memberChanged(String done, long id, List<String> next) {
        out.println(done);
        next.forEach(out::println);
        out.flush();
    }

    @Override
    public void memberAdded(io.rota.client.AddedMember added, String clientAddress, String done, List<String> next) {
        memberChanged(done, added.id(), next);
    }

    @Override
    public void memberPromoted(String done, io.rota.client.ClusterMember member) {
        memberChanged(done, member.id(), List.of());
    }

    @Override
    public void lockHeld(String name, String key, long fencingToken, long leaseId) {
        out.println(key);
        out.println("fencing token " + fencingToken);
        out.flush();
    }

    @Override
    public void leader(String election, Leader leader) {
        if (leader == null) {
            out.println("no leader");
        } else {
            out.println(leader.key());
            out.println(leader.value());
            out.println("epoch " + leader.epoch());
        }
        out.flush();
    }

    @Override
    public void onceStatus(String key, OnceStatus status) {
        out.println(status == null
                ? key + ": no record (never claimed, its claimer died, or its retention ended)"
                : key + ": " + status.state() + (status.result().isEmpty() ? "" : " (" + status.result() + ")")
                        + " by " + status.owner() + " at " + Instant.ofEpochMilli(status.atMillis()));
        out.flush();
    }

    @Override
    public void onceAlreadyDone(OnceStatus status) {
        out.println(status.key() + " already done: " + status.result());
        out.flush();
    }

    @Override
    public void jobHistory(List<JobRun> runs) {
        for (JobRun r : runs) {
            out.println(String.join(", ", r.fireTime().toString(), Long.toString(r.token()), r.instanceId(),
                    r.state().name(), orDash(r.start()), orDash(r.end()), r.outcome()));
        }
        out.flush();
    }

    @Override
    public void jobList(List<JobRun> latest) {
        for (JobRun r : latest) {
            out.println(String.join(", ", r.job(), r.fireTime().toString(), Long.toString(r.token()), r.instanceId(),
                    r.state().name(), r.outcome()));
        }
        out.flush();
    }

    /** An optional time to the millisecond (nanoseconds are noise to a reader), or "-". */
    static String orDash(Instant time) {
        return time == null ? "-" : time.truncatedTo(ChronoUnit.MILLIS).toString();
    }

    /** etcdctl's printKV: the key on one line, the value on the next (the value alone on its line). */
    private void kv(KeyValue kv, GetView view) {
        if (view != GetView.VALUES_ONLY) {
            out.println(show(kv.key()));
        }
        if (view == GetView.FULL || view == GetView.VALUES_ONLY) {
            out.println(show(kv.value()));
        }
    }

    @Override
    public void snapshot(io.rota.client.SnapshotSummary s, String file) {
        if (file != null) {
            out.println("Snapshot saved at " + file);
        }
        out.println("revision " + s.revision() + ", " + s.keys() + " keys, " + s.leases() + " leases, image "
                + s.imageBytes() + " bytes");
        out.println("entry " + s.appliedIndex() + " (term " + s.appliedTerm() + ") of cluster '" + s.clusterId()
                + "', from member " + s.memberId() + ", voters " + s.voters());
        out.println("sha256 " + s.sha256() + (file == null ? " (verified)" : ""));
        out.println("taken " + Instant.ofEpochMilli(s.createdUnixMs()).truncatedTo(ChronoUnit.SECONDS)
                + " by rota " + s.version());
        out.flush();
    }

    @Override
    public void alarms(String done, List<io.rota.client.Alarm> alarms) {
        if (done != null) {
            out.println(done);
        }
        // etcdctl's line per alarm.
        alarms.forEach(a -> out.println("memberID:" + a.memberId() + " alarm:" + a.type()));
        out.flush();
    }

    @Override
    public void compacted(long revision) {
        out.println("compacted revision " + revision);
        out.flush();
    }

    @Override
    public void authChanged(String done) {
        out.println(done);
        out.flush();
    }

    @Override
    public void userList(List<io.rota.client.Auth.User> users) {
        users.forEach(u -> out.println(u.name()));
        out.flush();
    }

    @Override
    public void user(io.rota.client.Auth.User user) {
        out.println("User: " + user.name());
        out.println("Roles: " + String.join(" ", user.roles()));
        out.flush();
    }

    @Override
    public void roleList(List<String> roles) {
        roles.forEach(out::println);
        out.flush();
    }

    @Override
    public void role(String role, List<io.rota.client.Auth.Permission> permissions) {
        out.println("Role " + role);
        if (role.equals("root")) {
            out.println("  (built in: may do anything)");
        }
        permissions.forEach(p -> out.println("  " + p));
        out.flush();
    }

    @Override
    public void authStatus(io.rota.client.Auth.Status status) {
        out.println("Authentication Status: " + status.enabled());
        out.println("AuthRevision: " + status.revision());
        out.flush();
    }
}
