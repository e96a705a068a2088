package io.rota.server.http;

import com.google.protobuf.ByteString;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.StoreSnapshot;
import io.rota.server.kv.CoordinationStateMachine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The recipes' state as the dashboard shows it — locks, elections, singleton jobs, leases — read from this
 * member's applied state under the recipes' default key layout (docs/locks.md, docs/jobs.md):
 * <pre>
 *   rota/lock/NAME/LEASE-HEX-SEQ      a lock contender (its client's session lease in hex, "-", a sequence; older
 *                                     SDKs: the lease alone); the lowest create_revision holds, its create_revision
 *                                     is the fencing token; the others wait in that order
 *   rota/election/NAME/LEASE-HEX-SEQ  a candidate; the first leads, value = its announcement, epoch = create_revision
 *   rota/jobs/JOB/runs/FIRE/TOKEN     one attempt of a singleton job (name=value lines)
 *   rota/jobs.lock/JOB/LEASE-HEX-SEQ  the job's lock
 * </pre>
 * {@link #read} runs on the driver thread and only copies (bounded); {@link #writeJson} runs elsewhere.
 * Recipes configured with another prefix are not shown.
 */
final class CoordinationReport {

    static final String LOCKS = "rota/lock/";
    static final String ELECTIONS = "rota/election/";
    static final String JOBS = "rota/jobs/";
    static final String JOB_LOCKS = "rota/jobs.lock/";
    /** Keys read per prefix, leases listed, keys listed per lease, runs shown per job. */
    static final int MAX_KEYS = 500;
    static final int MAX_LEASES = 100;
    static final int MAX_KEYS_PER_LEASE = 8;
    static final int MAX_RUNS = 6;
    /** A contender's last segment: its session lease in hex, then "-" and a sequence (the bare lease: older SDKs). */
    private static final Pattern LEASE_HEX = Pattern.compile("[0-9a-f]{1,16}(-[0-9a-f]{1,16})?");

    /** A copy of what the report needs, taken on the driver thread. */
    record Snapshot(Map<String, List<KeyValue>> byPrefix, List<StoreSnapshot.LeaseImage> leases,
                    Map<Long, List<String>> leaseKeys, int leaseCount) {
    }

    private CoordinationReport() {
    }

    /** Driver thread only: the state machine is not thread-safe. */
    static Snapshot read(CoordinationStateMachine sm) {
        Map<String, List<KeyValue>> byPrefix = new HashMap<>();
        for (String prefix : List.of(LOCKS, ELECTIONS, JOBS, JOB_LOCKS)) {
            ByteString key = ByteString.copyFromUtf8(prefix);
            byPrefix.put(prefix, sm.range(RangeRequest.newBuilder().setKey(key).setRangeEnd(prefixEnd(key))
                    .setLimit(MAX_KEYS).build()).getKvsList());
        }
        List<StoreSnapshot.LeaseImage> all = sm.leaseImages();
        List<StoreSnapshot.LeaseImage> leases = all.subList(0, Math.min(all.size(), MAX_LEASES));
        Map<Long, List<String>> keys = new HashMap<>();
        for (StoreSnapshot.LeaseImage l : leases) {
            List<String> names = new ArrayList<>();
            for (ByteString k : sm.timeToLive(LeaseTimeToLiveRequest.newBuilder().setID(l.getID()).setKeys(true)
                    .build()).getKeysList()) {
                if (names.size() == MAX_KEYS_PER_LEASE) {
                    names.add("…");
                    break;
                }
                names.add(k.toStringUtf8());
            }
            keys.put(l.getID(), names);
        }
        return new Snapshot(byPrefix, List.copyOf(leases), keys, all.size());
    }

    static void writeJson(StringBuilder json, Snapshot s) {
        Map<Long, StoreSnapshot.LeaseImage> leases = new HashMap<>();
        s.leases().forEach(l -> leases.put(l.getID(), l));
        json.append("{\"locks\":[");
        writeQueues(json, queues(s.byPrefix().get(LOCKS), LOCKS), leases, false);
        json.append("],\"elections\":[");
        writeQueues(json, queues(s.byPrefix().get(ELECTIONS), ELECTIONS), leases, true);
        json.append("],\"jobs\":[");
        writeJobs(json, s.byPrefix().get(JOBS), queues(s.byPrefix().get(JOB_LOCKS), JOB_LOCKS), leases);
        json.append("],\"leases\":[");
        boolean first = true;
        for (StoreSnapshot.LeaseImage l : s.leases()) {
            json.append(first ? "" : ",").append('{');
            Json.field(json, "id", Json.quote(Long.toHexString(l.getID()))).append(',');
            Json.field(json, "ttl", l.getTTL()).append(',');
            Json.field(json, "remainingMs", l.getRemainingMs()).append(",\"keys\":[");
            List<String> keys = s.leaseKeys().getOrDefault(l.getID(), List.of());
            for (int i = 0; i < keys.size(); i++) {
                json.append(i == 0 ? "" : ",").append(Json.quote(keys.get(i)));
            }
            json.append("]}");
            first = false;
        }
        json.append("],");
        Json.field(json, "leaseCount", s.leaseCount()).append('}');
    }

    /** Contender keys by queue name, each queue in create_revision order (first = holder or leader). */
    private static Map<String, List<KeyValue>> queues(List<KeyValue> kvs, String prefix) {
        Map<String, List<KeyValue>> queues = new TreeMap<>();
        for (KeyValue kv : kvs) {
            String rest = kv.getKey().toStringUtf8().substring(prefix.length());
            int slash = rest.lastIndexOf('/');
            if (kv.getLease() != 0 && slash > 0 && LEASE_HEX.matcher(rest.substring(slash + 1)).matches()) {
                queues.computeIfAbsent(rest.substring(0, slash), k -> new ArrayList<>()).add(kv);
            }
        }
        queues.values().forEach(q -> q.sort(Comparator.comparingLong(KeyValue::getCreateRevision)));
        return queues;
    }

    private static void writeQueues(StringBuilder json, Map<String, List<KeyValue>> queues,
                                    Map<Long, StoreSnapshot.LeaseImage> leases, boolean withValue) {
        boolean first = true;
        for (Map.Entry<String, List<KeyValue>> q : queues.entrySet()) {
            KeyValue head = q.getValue().get(0);
            json.append(first ? "" : ",").append('{');
            Json.field(json, "name", Json.quote(q.getKey())).append(',');
            writeHolder(json, head, leases);
            if (withValue) {
                json.append(',');
                Json.field(json, "value", Json.quote(head.getValue().toStringUtf8()));
            }
            json.append(",\"waiters\":[");
            for (int i = 1; i < q.getValue().size(); i++) {
                KeyValue w = q.getValue().get(i);
                json.append(i == 1 ? "" : ",").append('{');
                Json.field(json, "lease", Json.quote(Long.toHexString(w.getLease()))).append(',');
                Json.field(json, "revision", w.getCreateRevision()).append('}');
            }
            json.append("]}");
            first = false;
        }
    }

    /** The holder's lease (its key's last segment), token (create_revision), and its lease's time left. */
    private static void writeHolder(StringBuilder json, KeyValue head, Map<Long, StoreSnapshot.LeaseImage> leases) {
        Json.field(json, "holder", Json.quote(Long.toHexString(head.getLease()))).append(',');
        Json.field(json, "key", Json.quote(head.getKey().toStringUtf8())).append(',');
        Json.field(json, "token", head.getCreateRevision());
        StoreSnapshot.LeaseImage lease = leases.get(head.getLease());
        if (lease != null) {
            json.append(',');
            Json.field(json, "ttl", lease.getTTL()).append(',');
            Json.field(json, "remainingMs", lease.getRemainingMs());
        }
    }

    private static void writeJobs(StringBuilder json, List<KeyValue> kvs, Map<String, List<KeyValue>> locks,
                                  Map<Long, StoreSnapshot.LeaseImage> leases) {
        Map<String, List<Map<String, String>>> runs = new TreeMap<>();
        for (KeyValue kv : kvs) {
            String rest = kv.getKey().toStringUtf8().substring(JOBS.length());
            int at = rest.indexOf("/runs/");
            if (at > 0) {
                runs.computeIfAbsent(rest.substring(0, at), k -> new ArrayList<>()).add(fields(kv.getValue()));
            }
        }
        locks.keySet().forEach(job -> runs.computeIfAbsent(job, k -> new ArrayList<>()));
        boolean first = true;
        for (Map.Entry<String, List<Map<String, String>>> job : runs.entrySet()) {
            json.append(first ? "" : ",").append('{');
            Json.field(json, "name", Json.quote(job.getKey()));
            List<KeyValue> lock = locks.get(job.getKey());
            if (lock != null) {
                json.append(',');
                writeHolder(json, lock.get(0), leases);
            }
            json.append(",\"runs\":[");
            List<Map<String, String>> list = job.getValue();
            // Keys sort by fire time, then token: the newest attempts are last.
            for (int i = list.size() - 1, shown = 0; i >= 0 && shown < MAX_RUNS; i--, shown++) {
                json.append(shown == 0 ? "" : ",").append('{');
                boolean firstField = true;
                for (Map.Entry<String, String> f : list.get(i).entrySet()) {
                    json.append(firstField ? "" : ",");
                    Json.field(json, f.getKey(), Json.quote(f.getValue()));
                    firstField = false;
                }
                json.append('}');
            }
            json.append("]}");
            first = false;
        }
    }

    /** The recipes' record format: one name=value per line. */
    private static Map<String, String> fields(ByteString value) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : value.toString(StandardCharsets.UTF_8).split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && out.size() < 10) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return out;
    }

    /** The smallest key greater than every key starting with {@code prefix}. */
    private static ByteString prefixEnd(ByteString prefix) {
        byte[] end = prefix.toByteArray();
        end[end.length - 1]++;
        return ByteString.copyFrom(end);
    }
}
