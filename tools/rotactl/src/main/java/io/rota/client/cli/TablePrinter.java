package io.rota.client.cli;

import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.Member;
import io.rota.client.MemberStatus;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.OnceStatus;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;

import static io.rota.client.cli.Conversions.leaseHex;

/**
 * {@code -w table}: listings (get, lease list and timetolive, endpoint status and health, member list) as
 * bordered columns with a header; other results as in the simple format, as etcdctl does.
 */
final class TablePrinter extends SimplePrinter {

    TablePrinter(PrintWriter out, boolean hex) {
        super(out, hex);
    }

    @Override
    public void get(GetResult result, GetView view) {
        if (view == GetView.COUNT_ONLY) {
            print(new Table("COUNT").row(result.count()));
            return;
        }
        Table t = new Table("KEY", "VALUE", "CREATE_REVISION", "MOD_REVISION", "VERSION", "LEASE");
        for (KeyValue kv : result.kvs()) {
            t.row(show(kv.key()), show(kv.value()), kv.createRevision(), kv.modRevision(), kv.version(),
                    kv.lease() == 0 ? "-" : leaseHex(kv.lease()));
        }
        print(t);
    }

    @Override
    public void hashKv(List<HashRow> rows) {
        Table t = new Table("ENDPOINT", "HASH", "HASH REVISION", "COMPACT REVISION", "ERROR");
        for (HashRow r : rows) {
            if (r.hash() == null) {
                t.row(r.endpoint(), "-", "-", "-", r.error());
            } else {
                t.row(r.endpoint(), r.hash().hash(), r.hash().revision(), r.hash().compactRevision(), "");
            }
        }
        print(t);
    }

    @Override
    public void leaseTimeToLive(LeaseTimeToLive ttl, boolean withKeys) {
        print(new Table("ID", "GRANTED TTL", "REMAINING TTL", "KEYS").row(leaseHex(ttl.id()),
                ttl.grantedTtl().toSeconds() + "s", ttl.remaining().toSeconds() + "s",
                withKeys ? String.join(" ", ttl.keys()) : "-"));
    }

    @Override
    public void leaseList(List<Long> ids) {
        Table t = new Table("ID");
        ids.forEach(id -> t.row(leaseHex(id)));
        print(t);
    }

    @Override
    public void endpointStatus(List<StatusRow> rows) {
        Table t = new Table("ENDPOINT", "ID", "NAME", "VERSION", "IS LEADER", "RAFT TERM", "RAFT INDEX",
                "RAFT APPLIED INDEX", "REVISION", "ERRORS");
        for (StatusRow r : rows) {
            MemberStatus s = r.status();
            if (s == null) {
                t.row(r.endpoint(), "-", "-", "-", "-", "-", "-", "-", "-", r.error());
            } else {
                t.row(r.endpoint(), s.memberId(), s.name(), s.version(), s.isLeader(), s.raftTerm(), s.raftIndex(),
                        s.raftAppliedIndex(), s.revision(), String.join("; ", s.errors()));
            }
        }
        print(t);
    }

    @Override
    public void endpointHealth(List<HealthRow> rows) {
        Table t = new Table("ENDPOINT", "HEALTH", "TOOK", "ERROR");
        for (HealthRow r : rows) {
            t.row(r.endpoint(), r.error() == null, r.error() == null ? Conversions.format(r.took()) : "-",
                    r.error() == null ? "" : r.error());
        }
        print(t);
    }

    @Override
    public void memberList(List<Member> members) {
        Table t = new Table("ID", "STATUS", "NAME", "PEER ADDRS", "CLIENT ADDRS", "IS LEARNER");
        for (Member m : members) {
            t.row(m.id(), "started", m.name(), m.peerAddress(), m.clientAddress(), false);
        }
        print(t);
    }

    @Override
    public void clusterMembers(List<io.rota.client.ClusterMember> members, boolean progress, String clusterId) {
        Table t = progress
                ? new Table("ID", "STATUS", "NAME", "PEER ADDRS", "CLIENT ADDRS", "IS LEARNER", "IS LEADER",
                        "MATCH INDEX", "LAG", "CAUGHT UP")
                : new Table("ID", "STATUS", "NAME", "PEER ADDRS", "CLIENT ADDRS", "IS LEARNER");
        for (io.rota.client.ClusterMember m : members) {
            if (progress) {
                t.row(m.id(), status(m), m.name(), m.peerAddress(), m.clientAddress(), m.learner(), m.leader(),
                        m.matchIndex(), m.lag(), m.caughtUp());
            } else {
                t.row(m.id(), status(m), m.name(), m.peerAddress(), m.clientAddress(), m.learner());
            }
        }
        print(t);
        if (!clusterId.isEmpty()) {
            out.println("cluster id: " + clusterId);
            out.flush();
        }
    }

    @Override
    public void lockHeld(String name, String key, long fencingToken, long leaseId) {
        print(new Table("NAME", "KEY", "FENCING TOKEN", "LEASE").row(name, key, fencingToken, leaseHex(leaseId)));
    }

    @Override
    public void leader(String election, Leader leader) {
        Table t = new Table("ELECTION", "KEY", "VALUE", "EPOCH");
        print(leader == null ? t.row(election, "-", "-", "-")
                : t.row(election, leader.key(), leader.value(), leader.epoch()));
    }

    @Override
    public void onceStatus(String key, OnceStatus status) {
        Table t = new Table("KEY", "STATE", "OWNER", "RESULT", "AT");
        print(status == null ? t.row(key, "NONE", "-", "-", "-") : t.row(key, status.state(), status.owner(),
                status.result(), Instant.ofEpochMilli(status.atMillis())));
    }

    @Override
    public void jobHistory(List<JobRun> runs) {
        Table t = new Table("FIRE TIME", "TOKEN", "INSTANCE", "STATE", "START", "END", "OUTCOME");
        for (JobRun r : runs) {
            t.row(r.fireTime(), r.token(), r.instanceId(), r.state(), orDash(r.start()), orDash(r.end()), r.outcome());
        }
        print(t);
    }

    @Override
    public void jobList(List<JobRun> latest) {
        Table t = new Table("JOB", "LAST FIRE TIME", "TOKEN", "INSTANCE", "STATE", "OUTCOME");
        for (JobRun r : latest) {
            t.row(r.job(), r.fireTime(), r.token(), r.instanceId(), r.state(), r.outcome());
        }
        print(t);
    }

    private void print(Table t) {
        t.lines().forEach(out::println);
        out.flush();
    }

    @Override
    public void snapshot(io.rota.client.SnapshotSummary s, String file) {
        if (file != null) {
            out.println("Snapshot saved at " + file);
        }
        // etcdctl's snapshot status columns, then Rota's.
        print(new Table("HASH", "REVISION", "TOTAL KEYS", "TOTAL SIZE", "LEASES", "APPLIED INDEX", "CLUSTER ID")
                .row(s.sha256().substring(0, 16), s.revision(), s.keys(), s.imageBytes(), s.leases(), s.appliedIndex(),
                        s.clusterId()));
    }

    @Override
    public void alarms(String done, List<io.rota.client.Alarm> alarms) {
        if (done != null) {
            out.println(done);
        }
        Table t = new Table("MEMBER ID", "ALARM");
        alarms.forEach(a -> t.row(a.memberId(), a.type()));
        print(t);
    }

    @Override
    public void userList(List<io.rota.client.Auth.User> users) {
        Table t = new Table("USER", "ROLES");
        users.forEach(u -> t.row(u.name(), String.join(" ", u.roles())));
        print(t);
    }

    @Override
    public void user(io.rota.client.Auth.User user) {
        print(new Table("USER", "ROLES").row(user.name(), String.join(" ", user.roles())));
    }

    @Override
    public void roleList(List<String> roles) {
        Table t = new Table("ROLE");
        roles.forEach(t::row);
        print(t);
    }

    @Override
    public void role(String role, List<io.rota.client.Auth.Permission> permissions) {
        Table t = new Table("ROLE", "PERMISSION");
        if (role.equals("root")) {
            t.row(role, "(built in: may do anything)");
        }
        permissions.forEach(p -> t.row(role, p.toString()));
        print(t);
    }

    @Override
    public void authStatus(io.rota.client.Auth.Status status) {
        print(new Table("AUTH ENABLED", "AUTH REVISION").row(status.enabled(), status.revision()));
    }
}
