package io.rota.client.cli;

import io.rota.client.DeleteResult;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.Member;
import io.rota.client.MemberStatus;
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
import java.util.ArrayList;
import java.util.List;

import static io.rota.client.cli.Conversions.leaseHex;

/**
 * {@code -w json}: one JSON object per result on one line. Keys and values are base64, as etcdctl writes
 * them (any bytes survive, and tools written for etcdctl's JSON read ours); lease ids are hex strings as
 * rotactl prints and reads them; field names follow etcd's.
 */
final class JsonPrinter implements Printer {

    private final PrintWriter out;

    JsonPrinter(PrintWriter out) {
        this.out = out;
    }

    @Override
    public void put(PutResult result, boolean withPrevKv) {
        Json j = new Json().field("header", header(result.revision()));
        if (withPrevKv && result.prevKv() != null) {
            j.field("prev_kv", kv(result.prevKv()));
        }
        print(j);
    }

    @Override
    public void get(GetResult result, GetView view) {
        print(range(result));
    }

    @Override
    public void delete(DeleteResult result, boolean withPrevKvs) {
        print(deleted(result, withPrevKvs));
    }

    @Override
    public void txn(TxnResult result) {
        List<Json> responses = new ArrayList<>();
        for (OpResult r : result.responses()) {
            if (r instanceof PutResult p) {
                responses.add(new Json().field("response_put", new Json().field("header", header(p.revision()))));
            } else if (r instanceof GetResult g) {
                responses.add(new Json().field("response_range", range(g)));
            } else if (r instanceof DeleteResult d) {
                responses.add(new Json().field("response_delete_range", deleted(d, true)));
            }
        }
        print(new Json().field("header", header(result.revision())).field("succeeded", result.succeeded())
                .objects("responses", responses));
    }

    @Override
    public void watchEvent(WatchEvent event) {
        Json j = new Json().field("type", event.type().name()).field("kv", kv(event.kv()));
        if (event.prevKv() != null) {
            j.field("prev_kv", kv(event.prevKv()));
        }
        print(j);
    }

    @Override
    public void watchProgress(long revision) {
        print(new Json().field("header", header(revision)).field("progress_notify", true));
    }

    @Override
    public void hashKv(List<HashRow> rows) {
        List<Json> list = new ArrayList<>();
        for (HashRow r : rows) {
            Json j = new Json().field("endpoint", r.endpoint());
            if (r.hash() == null) {
                j.field("error", r.error());
            } else {
                j.field("member_id", r.hash().memberId()).field("hash", r.hash().hash())
                        .field("hash_revision", r.hash().revision())
                        .field("compact_revision", r.hash().compactRevision());
            }
            list.add(j);
        }
        print(new Json().objects("endpoints", list));
    }

    @Override
    public void version(String client, List<StatusRow> members) {
        List<Json> list = new ArrayList<>();
        for (StatusRow r : members) {
            Json j = new Json().field("endpoint", r.endpoint());
            list.add(r.status() == null ? j.field("error", r.error())
                    : j.field("name", r.status().name()).field("version", r.status().version()));
        }
        print(new Json().field("rotactl", client).objects("members", list));
    }

    @Override
    public void checkPerf(List<Check> checks) {
        List<Json> list = new ArrayList<>();
        for (Check c : checks) {
            list.add(new Json().field("name", c.name()).field("pass", c.passed()).field("message", c.message()));
        }
        print(new Json().objects("checks", list).field("pass", checks.stream().allMatch(Check::passed)));
    }

    @Override
    public void leaseGranted(Lease lease) {
        print(new Json().field("id", leaseHex(lease.id())).field("ttl", lease.ttl().toSeconds()));
    }

    @Override
    public void leaseRevoked(long id) {
        print(new Json().field("id", leaseHex(id)).field("revoked", true));
    }

    @Override
    public void leaseRenewed(long id, Duration ttl) {
        print(new Json().field("id", leaseHex(id)).field("ttl", ttl.toSeconds()));
    }

    @Override
    public void leaseTimeToLive(LeaseTimeToLive ttl, boolean withKeys) {
        Json j = new Json().field("id", leaseHex(ttl.id())).field("granted_ttl", ttl.grantedTtl().toSeconds())
                .field("ttl", ttl.remaining().toSeconds());
        if (withKeys) {
            j.strings("keys", ttl.keys());
        }
        print(j);
    }

    @Override
    public void leaseList(List<Long> ids) {
        print(new Json().strings("leases", ids.stream().map(Conversions::leaseHex).toList()));
    }

    @Override
    public void endpointStatus(List<StatusRow> rows) {
        List<Json> list = new ArrayList<>();
        for (StatusRow r : rows) {
            Json j = new Json().field("endpoint", r.endpoint());
            MemberStatus s = r.status();
            if (s == null) {
                j.field("error", r.error());
            } else {
                j.field("member_id", s.memberId()).field("name", s.name()).field("version", s.version())
                        .field("leader", s.leaderId()).field("is_leader", s.isLeader()).field("raft_term", s.raftTerm())
                        .field("raft_index", s.raftIndex()).field("raft_applied_index", s.raftAppliedIndex())
                        .field("revision", s.revision()).strings("errors", s.errors());
            }
            list.add(j);
        }
        print(new Json().objects("endpoints", list));
    }

    @Override
    public void endpointHealth(List<HealthRow> rows) {
        List<Json> list = new ArrayList<>();
        for (HealthRow r : rows) {
            Json j = new Json().field("endpoint", r.endpoint()).field("health", r.error() == null);
            if (r.error() == null) {
                j.field("took", Conversions.format(r.took()));
            } else {
                j.field("error", r.error());
            }
            list.add(j);
        }
        print(new Json().objects("endpoints", list));
    }

    @Override
    public void memberList(List<Member> members) {
        List<Json> list = new ArrayList<>();
        for (Member m : members) {
            list.add(new Json().field("id", m.id()).field("name", m.name()).field("peer_address", m.peerAddress())
                    .field("client_address", m.clientAddress()));
        }
        print(new Json().objects("members", list));
    }

    @Override
    public void clusterMembers(List<io.rota.client.ClusterMember> members, boolean progress, String clusterId) {
        List<Json> list = new ArrayList<>();
        for (io.rota.client.ClusterMember m : members) {
            list.add(clusterMember(m));
        }
        print(new Json().field("header", new Json().field("cluster_id", clusterId)).objects("members", list));
    }

    @Override
    public void memberChanged(String done, long id, List<String> next) {
        print(new Json().field("done", done).field("id", id).strings("next", next));
    }

    @Override
    public void memberAdded(io.rota.client.AddedMember added, String clientAddress, String done, List<String> next) {
        Json member = new Json().field("id", added.id()).field("name", added.name())
                .field("peer_address", added.peerAddress()).field("client_address", clientAddress)
                .field("is_learner", added.learner());
        print(new Json().field("done", done).field("id", added.id()).strings("next", next).field("member", member)
                .field("cluster_id", added.clusterId()).field("initial_cluster", added.initialCluster()));
    }

    @Override
    public void memberPromoted(String done, io.rota.client.ClusterMember m) {
        print(new Json().field("done", done).field("id", m.id()).strings("next", List.of())
                .field("member", clusterMember(m)));
    }

    /** A member as {@code member list} writes it. */
    private static Json clusterMember(io.rota.client.ClusterMember m) {
        return new Json().field("id", m.id()).field("name", m.name()).field("peer_address", m.peerAddress())
                .field("client_address", m.clientAddress()).field("is_learner", m.learner())
                .field("is_leader", m.leader()).field("match_index", m.matchIndex()).field("lag", m.lag())
                .field("caught_up", m.caughtUp());
    }

    @Override
    public void lockHeld(String name, String key, long fencingToken, long leaseId) {
        print(new Json().field("name", name).field("key", key).field("fencing_token", fencingToken)
                .field("lease", leaseHex(leaseId)));
    }

    @Override
    public void leader(String election, Leader leader) {
        Json j = new Json().field("election", election).field("leader", leader != null);
        if (leader != null) {
            j.field("key", leader.key()).field("value", leader.value()).field("epoch", leader.epoch())
                    .field("revision", leader.revision());
        }
        print(j);
    }

    @Override
    public void onceStatus(String key, OnceStatus status) {
        print(status == null ? new Json().field("key", key).field("state", "NONE") : once(status));
    }

    @Override
    public void onceAlreadyDone(OnceStatus status) {
        print(once(status));
    }

    @Override
    public void jobHistory(List<JobRun> runs) {
        List<Json> list = new ArrayList<>();
        for (JobRun r : runs) {
            list.add(run(r));
        }
        print(new Json().objects("runs", list));
    }

    @Override
    public void jobList(List<JobRun> latest) {
        List<Json> list = new ArrayList<>();
        for (JobRun r : latest) {
            list.add(new Json().field("job", r.job()).field("last_run", run(r)));
        }
        print(new Json().objects("jobs", list));
    }

    private static Json run(JobRun r) {
        Json j = new Json().field("job", r.job()).field("fire_time", r.fireTime().toString())
                .field("token", r.token()).field("instance", r.instanceId()).field("state", r.state().name());
        if (r.start() != null) {
            j.field("start", SimplePrinter.orDash(r.start()));
        }
        if (r.end() != null) {
            j.field("end", SimplePrinter.orDash(r.end()));
        }
        return j.field("outcome", r.outcome());
    }

    private static Json once(OnceStatus s) {
        return new Json().field("key", s.key()).field("state", s.state().name()).field("owner", s.owner())
                .field("result", s.result()).field("at", Instant.ofEpochMilli(s.atMillis()).toString())
                .field("revision", s.revision());
    }

    private void print(Json j) {
        out.println(j);
        out.flush();
    }

    private static Json header(long revision) {
        return new Json().field("revision", revision);
    }

    private static Json range(GetResult r) {
        return new Json().field("header", header(r.revision()))
                .objects("kvs", r.kvs().stream().map(JsonPrinter::kv).toList())
                .field("count", r.count()).field("more", r.more());
    }

    private static Json deleted(DeleteResult d, boolean withPrevKvs) {
        Json j = new Json().field("header", header(d.revision())).field("deleted", d.deleted());
        if (withPrevKvs) {
            j.objects("prev_kvs", d.prevKvs().stream().map(JsonPrinter::kv).toList());
        }
        return j;
    }

    private static Json kv(KeyValue kv) {
        Json j = new Json().field("key", Bytes.base64(kv.key())).field("create_revision", kv.createRevision())
                .field("mod_revision", kv.modRevision()).field("version", kv.version())
                .field("value", Bytes.base64(kv.value()));
        if (kv.lease() != 0) {
            j.field("lease", leaseHex(kv.lease()));
        }
        return j;
    }

    @Override
    public void snapshot(io.rota.client.SnapshotSummary s, String file) {
        Json j = new Json();
        if (file != null) {
            j.field("file", file);
        }
        print(j.field("revision", s.revision()).field("total_keys", s.keys()).field("leases", s.leases())
                .field("total_size", s.imageBytes()).field("sha256", s.sha256())
                .field("applied_index", s.appliedIndex()).field("applied_term", s.appliedTerm())
                .field("cluster_id", s.clusterId()).field("member_id", s.memberId())
                .field("created_unix_ms", s.createdUnixMs()).field("version", s.version()));
    }

    @Override
    public void alarms(String done, List<io.rota.client.Alarm> alarms) {
        List<Json> list = new ArrayList<>();
        alarms.forEach(a -> list.add(new Json().field("member_id", a.memberId()).field("alarm", a.type())));
        Json j = new Json();
        if (done != null) {
            j.field("done", done);
        }
        print(j.objects("alarms", list));
    }

    @Override
    public void compacted(long revision) {
        print(new Json().field("compact_revision", revision));
    }

    @Override
    public void authChanged(String done) {
        print(new Json().field("done", done));
    }

    @Override
    public void userList(List<io.rota.client.Auth.User> users) {
        List<Json> list = new ArrayList<>();
        users.forEach(u -> list.add(user(u.name(), u.roles())));
        print(new Json().objects("users", list));
    }

    @Override
    public void user(io.rota.client.Auth.User user) {
        print(user(user.name(), user.roles()));
    }

    private static Json user(String name, List<String> roles) {
        return new Json().field("name", name).strings("roles", roles);
    }

    @Override
    public void roleList(List<String> roles) {
        print(new Json().strings("roles", roles));
    }

    /** Keys and range ends in base64 as everywhere in this format; an empty range end is a single key. */
    @Override
    public void role(String role, List<io.rota.client.Auth.Permission> permissions) {
        List<Json> perms = new ArrayList<>();
        for (io.rota.client.Auth.Permission p : permissions) {
            perms.add(new Json().field("perm_type", p.type().name()).field("key", Bytes.base64(p.key()))
                    .field("range_end", Bytes.base64(p.rangeEnd())));
        }
        print(new Json().field("name", role).field("root", role.equals("root")).objects("perm", perms));
    }

    @Override
    public void authStatus(io.rota.client.Auth.Status status) {
        print(new Json().field("enabled", status.enabled()).field("auth_revision", status.revision()));
    }
}
