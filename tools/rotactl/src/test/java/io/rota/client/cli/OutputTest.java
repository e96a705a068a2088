package io.rota.client.cli;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.DeleteResult;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.KvHash;
import io.rota.client.Lease;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.Member;
import io.rota.client.MemberStatus;
import io.rota.client.PutResult;
import io.rota.client.TxnResult;
import io.rota.client.WatchEvent;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.JobState;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.OnceState;
import io.rota.client.recipes.OnceStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The three output formats, line for line. */
class OutputTest {

    private static final KeyValue A = kv("a", "one", 0);
    private static final KeyValue B = kv("b", "two \"quoted\"\nline", 0x15);
    private static final GetResult TWO = new GetResult(List.of(A, B), 2, false, 9);

    @Test
    void simpleIsEtcdctlsPlainText() {
        assertEquals("a\none\nb\ntwo \"quoted\"\\nline\n", simple(p -> p.get(TWO, Printer.GetView.FULL)));
        assertEquals("a\nb\n", simple(p -> p.get(TWO, Printer.GetView.KEYS_ONLY)));
        assertEquals("one\ntwo \"quoted\"\\nline\n", simple(p -> p.get(TWO, Printer.GetView.VALUES_ONLY)));
        assertEquals("2\n", simple(p -> p.get(new GetResult(List.of(), 2, false, 9), Printer.GetView.COUNT_ONLY)));
        assertEquals("OK\n", simple(p -> p.put(new PutResult(10, A), false)));
        assertEquals("OK\na\none\n", simple(p -> p.put(new PutResult(10, A), true)));
        assertEquals("2\na\none\nb\ntwo \"quoted\"\\nline\n", simple(p -> p.delete(new DeleteResult(2, List.of(A, B), 11), true)));
        assertEquals("2\n", simple(p -> p.delete(new DeleteResult(2, List.of(A, B), 11), false)));
        assertEquals("SUCCESS\n\nOK\n\na\none\n\n1\n", simple(p -> p.txn(new TxnResult(true,
                List.of(new PutResult(12, null), new GetResult(List.of(A), 1, false, 12), new DeleteResult(1, List.of(), 12)), 12))));
        assertEquals("FAILURE\n", simple(p -> p.txn(new TxnResult(false, List.of(), 12))));
        assertEquals("PUT\na\none\n", simple(p -> p.watchEvent(new WatchEvent(WatchEvent.Type.PUT, A))));
        assertEquals("DELETE\na\none\na\n\n", simple(p -> p.watchEvent(
                new WatchEvent(WatchEvent.Type.DELETE, kv("a", "", 0), A))));
        assertEquals("lease 0000000000000015 granted with TTL(10s)\n",
                simple(p -> p.leaseGranted(new Lease(0x15, Duration.ofSeconds(10)))));
        assertEquals("lease 0000000000000015 revoked\n", simple(p -> p.leaseRevoked(0x15)));
        assertEquals("lease 0000000000000015 keepalived with TTL(10)\n", simple(p -> p.leaseRenewed(0x15, Duration.ofSeconds(10))));
        assertEquals("lease 0000000000000015 granted with TTL(10s), remaining(7s), attached keys([a, b])\n",
                simple(p -> p.leaseTimeToLive(ttl(), true)));
        assertEquals("lease 0000000000000015 granted with TTL(10s), remaining(7s)\n",
                simple(p -> p.leaseTimeToLive(ttl(), false)));
        assertEquals("found 2 leases\n0000000000000015\n00000000000000ff\n", simple(p -> p.leaseList(List.of(0x15L, 0xffL))));
        assertEquals("1, started, n1, 127.0.0.1:7101, 127.0.0.1:7001, false\n", simple(p -> p.memberList(
                List.of(new Member(1, "n1", "127.0.0.1:7001", "127.0.0.1:7101")))));
        assertEquals("127.0.0.1:7001, 1, n1, 0.1.0, true, 2, 15, 14, 9, \n"
                        + "127.0.0.1:7003, -, -, -, -, -, -, -, -, UNAVAILABLE: connection refused\n",
                simple(p -> p.endpointStatus(statusRows())));
        assertEquals("127.0.0.1:7001 is healthy: linearizable read took 12ms\n"
                        + "127.0.0.1:7003 is unhealthy: UNAVAILABLE: connection refused\n",
                simple(p -> p.endpointHealth(List.of(new Printer.HealthRow("127.0.0.1:7001", Duration.ofMillis(12), null),
                        new Printer.HealthRow("127.0.0.1:7003", null, "UNAVAILABLE: connection refused")))));
    }

    /** Issue 32, item 7: member add says what it does to the quorum, and prefers a learner to a voter. */
    @Test
    void memberAddSaysWhatItDoesToTheQuorum() {
        List<ClusterMember> three = List.of(member(1, false), member(2, false), member(3, false));
        String cluster = "n1=1@127.0.0.1:7101,n2=2@127.0.0.1:7102,n3=3@127.0.0.1:7103,n4=4@127.0.0.1:7104";
        AddedMember voter = new AddedMember(4, "n4", "127.0.0.1:7104", false, withN4(three, false), "");
        assertEquals("""
                Member n4 added with id 4 as a voter (peer 127.0.0.1:7104)
                The cluster now needs 3 of 4 votes; until n4 starts, one more failure stops it. Prefer --learner, then 'rotactl member promote'.
                Start it on an empty data dir:
                  rota server --name n4 --data-dir DATA_DIR --listen-peer 127.0.0.1:7104 --listen-client 127.0.0.1:7004 \
                --initial-cluster %s --initial-cluster-state existing [--cluster-id ID, as the others]
                """.formatted(cluster), simple(p -> MemberCommand.AddCommand.printAdded(p, voter, "127.0.0.1:7004")));

        AddedMember learner = new AddedMember(4, "n4", "127.0.0.1:7104", true, withN4(three, true), "");
        String out = simple(p -> MemberCommand.AddCommand.printAdded(p, learner, ""));
        assertTrue(out.startsWith("Member n4 added with id 4 as a learner (peer 127.0.0.1:7104)\n"
                + "A learner does not vote: the cluster still needs 2 of 3 votes.\n"), out);

        List<ClusterMember> five = List.of(member(1, false), member(2, false), member(3, false), member(4, false),
                member(5, false));
        AddedMember sixth = new AddedMember(6, "n6", "127.0.0.1:7106", false,
                java.util.stream.Stream.concat(five.stream(), java.util.stream.Stream.of(member(6, false))).toList(), "");
        assertEquals("The cluster now needs 4 of 6 votes; until n6 starts, it survives 1 failure, not 2."
                + " Prefer --learner, then 'rotactl member promote'.", sixth.quorumEffect());
    }

    @Test
    @DisplayName("issue 34: member add's JSON has the new member's record and how it starts; promotion its record")
    void memberAddAndPromotionAsJson() {
        List<ClusterMember> three = List.of(member(1, false), member(2, false), member(3, false));
        AddedMember learner = new AddedMember(4, "n4", "127.0.0.1:7104", true, withN4(three, true), "rota-c1");
        String json = json(p -> MemberCommand.AddCommand.printAdded(p, learner, "127.0.0.1:7004", true));
        assertTrue(json.startsWith("{\"done\":\"Member n4 added with id 4 as a learner (peer 127.0.0.1:7104)\","
                + "\"id\":4,\"next\":["), json);
        assertTrue(json.endsWith(",\"member\":{\"id\":4,\"name\":\"n4\",\"peer_address\":\"127.0.0.1:7104\","
                + "\"client_address\":\"127.0.0.1:7004\",\"is_learner\":true},\"cluster_id\":\"rota-c1\","
                + "\"initial_cluster\":\"n1=1@127.0.0.1:7101,n2=2@127.0.0.1:7102,n3=3@127.0.0.1:7103,"
                + "n4=4@127.0.0.1:7104\"}\n"), json);
        String simple = simple(p -> MemberCommand.AddCommand.printAdded(p, learner, "127.0.0.1:7004", true));
        assertTrue(simple.endsWith("Waiting for it to catch up, then promoting it (progress on stderr).\n"), simple);
        ClusterMember voter = new ClusterMember(4, "n4", "127.0.0.1:7104", "127.0.0.1:7004", false, false, 42, 0, true);
        assertEquals("{\"done\":\"promoted\",\"id\":4,\"next\":[],\"member\":{\"id\":4,\"name\":\"n4\","
                + "\"peer_address\":\"127.0.0.1:7104\",\"client_address\":\"127.0.0.1:7004\",\"is_learner\":false,"
                + "\"is_leader\":false,\"match_index\":42,\"lag\":0,\"caught_up\":true}}\n",
                json(p -> p.memberPromoted("promoted", voter)));
        assertEquals("promoted\n", simple(p -> p.memberPromoted("promoted", voter)));
    }

    @Test
    @DisplayName("member list shows the cluster's id (issue 32) where etcd puts it, in json's header, and under the table; plain text stays etcdctl's")
    void memberListShowsTheClusterId() {
        List<ClusterMember> three = List.of(member(1, false), member(2, false), member(3, false));
        String json = json(p -> p.clusterMembers(three, false, "rota-0123456789abcdef"));
        assertTrue(json.startsWith("{\"header\":{\"cluster_id\":\"rota-0123456789abcdef\"},\"members\":["), json);
        String table = table(p -> p.clusterMembers(three, true, "rota-0123456789abcdef"));
        assertTrue(table.strip().endsWith("cluster id: rota-0123456789abcdef"), table);
        String simple = simple(p -> p.clusterMembers(three, false, "rota-0123456789abcdef"));
        assertFalse(simple.contains("rota-0123456789abcdef"), simple);
        assertEquals(3, simple.strip().lines().count(), simple);
    }

    private static ClusterMember member(long id, boolean learner) {
        return new ClusterMember(id, "n" + id, "127.0.0.1:710" + id, "", learner, false, 0, 0, false);
    }

    private static List<ClusterMember> withN4(List<ClusterMember> three, boolean learner) {
        return java.util.stream.Stream.concat(three.stream(), java.util.stream.Stream.of(member(4, learner))).toList();
    }

    @Test
    void jsonIsOneEscapedObjectPerResult() {
        // Keys and values in base64, as etcdctl: "a" = YQ==, "one" = b25l, "b" = Yg==.
        assertEquals("{\"header\":{\"revision\":9},\"kvs\":[{\"key\":\"YQ==\",\"create_revision\":3,\"mod_revision\":4,"
                        + "\"version\":2,\"value\":\"b25l\"},{\"key\":\"Yg==\",\"create_revision\":3,\"mod_revision\":4,"
                        + "\"version\":2,\"value\":\"dHdvICJxdW90ZWQiCmxpbmU=\",\"lease\":\"0000000000000015\"}],"
                        + "\"count\":2,\"more\":false}\n",
                json(p -> p.get(TWO, Printer.GetView.FULL)));
        assertEquals("{\"header\":{\"revision\":10}}\n", json(p -> p.put(new PutResult(10, null), true)));
        assertEquals("{\"header\":{\"revision\":11},\"deleted\":1,\"prev_kvs\":[{\"key\":\"YQ==\",\"create_revision\":3,"
                + "\"mod_revision\":4,\"version\":2,\"value\":\"b25l\"}]}\n", json(p -> p.delete(new DeleteResult(1, List.of(A), 11), true)));
        assertEquals("{\"header\":{\"revision\":12},\"succeeded\":true,\"responses\":[{\"response_put\":{\"header\":"
                        + "{\"revision\":12}}},{\"response_delete_range\":{\"header\":{\"revision\":12},\"deleted\":0,\"prev_kvs\":[]}}]}\n",
                json(p -> p.txn(new TxnResult(true, List.of(new PutResult(12, null), new DeleteResult(0, List.of(), 12)), 12))));
        assertEquals("{\"id\":\"0000000000000015\",\"ttl\":10}\n", json(p -> p.leaseGranted(new Lease(0x15, Duration.ofSeconds(10)))));
        assertEquals("{\"id\":\"0000000000000015\",\"granted_ttl\":10,\"ttl\":7,\"keys\":[\"a\",\"b\"]}\n",
                json(p -> p.leaseTimeToLive(ttl(), true)));
        assertEquals("{\"leases\":[]}\n", json(p -> p.leaseList(List.of())));
        assertEquals("{\"endpoints\":[{\"endpoint\":\"127.0.0.1:7001\",\"member_id\":1,\"name\":\"n1\",\"version\":\"0.1.0\","
                        + "\"leader\":1,\"is_leader\":true,\"raft_term\":2,\"raft_index\":15,\"raft_applied_index\":14,"
                        + "\"revision\":9,\"errors\":[]},{\"endpoint\":\"127.0.0.1:7003\",\"error\":\"UNAVAILABLE: connection refused\"}]}\n",
                json(p -> p.endpointStatus(statusRows())));
        assertEquals("{\"type\":\"DELETE\",\"kv\":{\"key\":\"YQ==\",\"create_revision\":3,\"mod_revision\":4,\"version\":2,"
                        + "\"value\":\"\"}}\n", json(p -> p.watchEvent(new WatchEvent(WatchEvent.Type.DELETE, kv("a", "", 0)))));
        assertEquals("{\"members\":[{\"id\":1,\"name\":\"n1\",\"peer_address\":\"p:1\",\"client_address\":\"c:1\"}]}\n",
                json(p -> p.memberList(List.of(new Member(1, "n1", "c:1", "p:1")))));
    }

    @Test
    void jsonEscapesControlCharacters() {
        assertEquals("\"a\\u0001\\t\\r\\b\\f\\\\ é\"", Json.quote("a\u0001\t\r\b\f\\ é"));
    }

    @Test
    void tableAlignsColumnsUnderACentredHeader() {
        assertEquals("""
                +----------------+----+------+---------+-----------+-----------+------------+--------------------+----------+---------------------------------+
                |    ENDPOINT    | ID | NAME | VERSION | IS LEADER | RAFT TERM | RAFT INDEX | RAFT APPLIED INDEX | REVISION |             ERRORS              |
                +----------------+----+------+---------+-----------+-----------+------------+--------------------+----------+---------------------------------+
                | 127.0.0.1:7001 |  1 | n1   | 0.1.0   | true      |         2 |         15 |                 14 |        9 |                                 |
                | 127.0.0.1:7003 |  - | -    | -       | -         |         - |          - |                  - |        - | UNAVAILABLE: connection refused |
                +----------------+----+------+---------+-----------+-----------+------------+--------------------+----------+---------------------------------+
                """, table(p -> p.endpointStatus(statusRows())));
        assertEquals("""
                +-----+--------------------+-----------------+--------------+---------+------------------+
                | KEY |       VALUE        | CREATE_REVISION | MOD_REVISION | VERSION |      LEASE       |
                +-----+--------------------+-----------------+--------------+---------+------------------+
                | a   | one                |               3 |            4 |       2 | -                |
                | b   | two "quoted"\\nline |               3 |            4 |       2 | 0000000000000015 |
                +-----+--------------------+-----------------+--------------+---------+------------------+
                """, table(p -> p.get(TWO, Printer.GetView.FULL)));
        assertEquals("""
                +----+
                | ID |
                +----+
                """, table(p -> p.leaseList(List.of())));
        assertEquals("OK\n", table(p -> p.put(new PutResult(10, null), false)));
    }

    @Test
    void recipeResultsInEachFormat() {
        assertEquals("rota/lock/db/0000000000000015\nfencing token 42\n",
                simple(p -> p.lockHeld("db", "rota/lock/db/0000000000000015", 42, 0x15)));
        assertEquals("{\"name\":\"db\",\"key\":\"rota/lock/db/0000000000000015\",\"fencing_token\":42,"
                + "\"lease\":\"0000000000000015\"}\n", json(p -> p.lockHeld("db", "rota/lock/db/0000000000000015", 42, 0x15)));
        assertEquals("""
                +------+-------------------------------+---------------+------------------+
                | NAME |              KEY              | FENCING TOKEN |      LEASE       |
                +------+-------------------------------+---------------+------------------+
                | db   | rota/lock/db/0000000000000015 |            42 | 0000000000000015 |
                +------+-------------------------------+---------------+------------------+
                """, table(p -> p.lockHeld("db", "rota/lock/db/0000000000000015", 42, 0x15)));

        Leader leader = new Leader("sched", "rota/election/sched/0000000000000015", "app-1:8080", 42, 45);
        assertEquals("rota/election/sched/0000000000000015\napp-1:8080\nepoch 42\n", simple(p -> p.leader("sched", leader)));
        assertEquals("no leader\n", simple(p -> p.leader("sched", null)));
        assertEquals("{\"election\":\"sched\",\"leader\":true,\"key\":\"rota/election/sched/0000000000000015\","
                + "\"value\":\"app-1:8080\",\"epoch\":42,\"revision\":45}\n", json(p -> p.leader("sched", leader)));
        assertEquals("{\"election\":\"sched\",\"leader\":false}\n", json(p -> p.leader("sched", null)));
        assertEquals("| sched    | -   | -     | -     |", table(p -> p.leader("sched", null)).lines().toList().get(3));

        OnceStatus done = new OnceStatus("r/1", OnceState.DONE, "pid-7", "exit 0", 0, 30);
        assertEquals("r/1 already done: exit 0\n", simple(p -> p.onceAlreadyDone(done)));
        assertEquals("r/1: DONE (exit 0) by pid-7 at 1970-01-01T00:00:00Z\n", simple(p -> p.onceStatus("r/1", done)));
        assertEquals("r/2: no record (never claimed, its claimer died, or its retention ended)\n",
                simple(p -> p.onceStatus("r/2", null)));
        assertEquals("{\"key\":\"r/1\",\"state\":\"DONE\",\"owner\":\"pid-7\",\"result\":\"exit 0\","
                + "\"at\":\"1970-01-01T00:00:00Z\",\"revision\":30}\n", json(p -> p.onceAlreadyDone(done)));
        assertEquals("{\"key\":\"r/2\",\"state\":\"NONE\"}\n", json(p -> p.onceStatus("r/2", null)));
        assertEquals("| r/1 | DONE  | pid-7 | exit 0 | 1970-01-01T00:00:00Z |",
                table(p -> p.onceStatus("r/1", done)).lines().toList().get(3));

        Instant fire = Instant.parse("2026-11-29T08:00:00Z");
        List<JobRun> runs = List.of(new JobRun("mail", fire, 17, "app-1", JobState.DONE, fire, fire.plusSeconds(2), "ok"),
                new JobRun("mail", fire.plusSeconds(60), 19, "app-2", JobState.RUNNING, fire.plusSeconds(60), null, ""));
        assertEquals("2026-11-29T08:00:00Z, 17, app-1, DONE, 2026-11-29T08:00:00Z, 2026-11-29T08:00:02Z, ok\n"
                + "2026-11-29T08:01:00Z, 19, app-2, RUNNING, 2026-11-29T08:01:00Z, -, \n", simple(p -> p.jobHistory(runs)));
        assertEquals("{\"runs\":[{\"job\":\"mail\",\"fire_time\":\"2026-11-29T08:00:00Z\",\"token\":17,"
                + "\"instance\":\"app-1\",\"state\":\"DONE\",\"start\":\"2026-11-29T08:00:00Z\","
                + "\"end\":\"2026-11-29T08:00:02Z\",\"outcome\":\"ok\"},{\"job\":\"mail\",\"fire_time\":"
                + "\"2026-11-29T08:01:00Z\",\"token\":19,\"instance\":\"app-2\",\"state\":\"RUNNING\","
                + "\"start\":\"2026-11-29T08:01:00Z\",\"outcome\":\"\"}]}\n", json(p -> p.jobHistory(runs)));
        assertEquals("""
                +----------------------+-------+----------+---------+----------------------+----------------------+---------+
                |      FIRE TIME       | TOKEN | INSTANCE |  STATE  |        START         |         END          | OUTCOME |
                +----------------------+-------+----------+---------+----------------------+----------------------+---------+
                | 2026-11-29T08:00:00Z |    17 | app-1    | DONE    | 2026-11-29T08:00:00Z | 2026-11-29T08:00:02Z | ok      |
                | 2026-11-29T08:01:00Z |    19 | app-2    | RUNNING | 2026-11-29T08:01:00Z | -                    |         |
                +----------------------+-------+----------+---------+----------------------+----------------------+---------+
                """, table(p -> p.jobHistory(runs)));
    }

    @Test
    void keysAndValuesThatWouldBreakALineAreEscapedOrHexOrBase64() {
        KeyValue odd = new KeyValue("k\n1".getBytes(StandardCharsets.UTF_8),
                new byte[] {(byte) 0xff, 'a', '\t', '\\', 0x1b, (byte) 0xc3, (byte) 0xa9}, 3, 4, 1, 0);
        GetResult one = new GetResult(List.of(odd), 1, false, 9);
        assertEquals("k\\n1\n\\xffa\\t\\\\\\x1b\u00e9\n", simple(p -> p.get(one, Printer.GetView.FULL)));
        assertEquals("\\x6b\\x0a\\x31\n\\xff\\x61\\x09\\x5c\\x1b\\xc3\\xa9\n",
                render(Printer.Format.SIMPLE, true, p -> p.get(one, Printer.GetView.FULL)));
        assertEquals("| k\\n1 | \\xffa\\t\\\\\\x1b\u00e9 |               3 |            4 |       1 | -     |",
                table(p -> p.get(one, Printer.GetView.FULL)).lines().toList().get(3));
        assertEquals("{\"header\":{\"revision\":9},\"kvs\":[{\"key\":\"awox\",\"create_revision\":3,\"mod_revision\":4,"
                + "\"version\":1,\"value\":\"/2EJXBvDqQ==\"}],\"count\":1,\"more\":false}\n",
                json(p -> p.get(one, Printer.GetView.FULL)));
    }

    @Test
    void hashkvVersionProgressAndCheckPerf() {
        List<Printer.HashRow> hashes = List.of(
                new Printer.HashRow("127.0.0.1:7001", new KvHash("127.0.0.1:7001", 1, 3_000_000_000L, 9, 0), null),
                new Printer.HashRow("127.0.0.1:7003", null, "UNAVAILABLE: connection refused"));
        assertEquals("127.0.0.1:7001, 3000000000, 9\n127.0.0.1:7003, -, -, UNAVAILABLE: connection refused\n",
                simple(p -> p.hashKv(hashes)));
        assertEquals("{\"endpoints\":[{\"endpoint\":\"127.0.0.1:7001\",\"member_id\":1,\"hash\":3000000000,"
                + "\"hash_revision\":9,\"compact_revision\":0},{\"endpoint\":\"127.0.0.1:7003\","
                + "\"error\":\"UNAVAILABLE: connection refused\"}]}\n", json(p -> p.hashKv(hashes)));
        assertEquals("| 127.0.0.1:7001 | 3000000000 |             9 |                0 |                                 |",
                table(p -> p.hashKv(hashes)).lines().toList().get(3));

        assertEquals("rotactl version: 0.1.0\n127.0.0.1:7001: server version 0.1.0 (n1)\n"
                + "127.0.0.1:7003: no answer (UNAVAILABLE: connection refused)\n", simple(p -> p.version("0.1.0", statusRows())));
        assertEquals("{\"rotactl\":\"0.1.0\",\"members\":[{\"endpoint\":\"127.0.0.1:7001\",\"name\":\"n1\","
                + "\"version\":\"0.1.0\"},{\"endpoint\":\"127.0.0.1:7003\",\"error\":\"UNAVAILABLE: connection refused\"}]}\n",
                json(p -> p.version("0.1.0", statusRows())));

        assertEquals("progress notify: 42\n", simple(p -> p.watchProgress(42)));
        assertEquals("{\"header\":{\"revision\":42},\"progress_notify\":true}\n", json(p -> p.watchProgress(42)));

        List<Printer.Check> checks = List.of(new Printer.Check("throughput", true, "Throughput is 150 writes/s"),
                new Printer.Check("stddev", false, "Stddev is 0.2s"));
        assertEquals("PASS: Throughput is 150 writes/s\nFAIL: Stddev is 0.2s\nFAIL\n", simple(p -> p.checkPerf(checks)));
        assertEquals("{\"checks\":[{\"name\":\"throughput\",\"pass\":true,\"message\":\"Throughput is 150 writes/s\"},"
                + "{\"name\":\"stddev\",\"pass\":false,\"message\":\"Stddev is 0.2s\"}],\"pass\":false}\n",
                json(p -> p.checkPerf(checks)));
        assertEquals("PASS: Throughput is 150 writes/s\nPASS\n", simple(p -> p.checkPerf(checks.subList(0, 1))));
    }

    @Test
    void snapshotAlarmsAndCompaction() {
        io.rota.client.SnapshotSummary summary = new io.rota.client.SnapshotSummary(1234, 5678, 4, "rota", 1, 96, 3,
                48211, "9f2c0d1e77a4b3c2" + "0".repeat(48), List.of(1L, 2L, 3L), 1_796_167_800_000L, "0.1.0");
        assertEquals("Snapshot saved at b.db\nrevision 1234, 96 keys, 3 leases, image 48211 bytes\n"
                + "entry 5678 (term 4) of cluster 'rota', from member 1, voters [1, 2, 3]\n"
                + "sha256 9f2c0d1e77a4b3c2" + "0".repeat(48) + "\ntaken 2026-12-01T23:30:00Z by rota 0.1.0\n",
                simple(p -> p.snapshot(summary, "b.db")));
        assertTrue(simple(p -> p.snapshot(summary, null)).contains(" (verified)\n"));
        assertEquals("{\"revision\":1234,\"total_keys\":96,\"leases\":3,\"total_size\":48211,\"sha256\":\"9f2c0d1e77a4b3c2"
                + "0".repeat(48) + "\",\"applied_index\":5678,\"applied_term\":4,\"cluster_id\":\"rota\",\"member_id\":1,"
                + "\"created_unix_ms\":1796167800000,\"version\":\"0.1.0\"}\n", json(p -> p.snapshot(summary, null)));
        assertEquals("| 9f2c0d1e77a4b3c2 |     1234 |         96 |      48211 |      3 |          5678 | rota       |",
                table(p -> p.snapshot(summary, null)).lines().toList().get(3));

        List<io.rota.client.Alarm> alarms = List.of(new io.rota.client.Alarm(1, "NOSPACE"));
        assertEquals("memberID:1 alarm:NOSPACE\n", simple(p -> p.alarms(null, alarms)));
        assertEquals("Disarmed 1 alarm(s).\n", simple(p -> p.alarms("Disarmed 1 alarm(s).", List.of())));
        assertEquals("{\"alarms\":[{\"member_id\":1,\"alarm\":\"NOSPACE\"}]}\n", json(p -> p.alarms(null, alarms)));
        assertEquals("|         1 | NOSPACE |", table(p -> p.alarms(null, alarms)).lines().toList().get(3));

        assertEquals("compacted revision 1200\n", simple(p -> p.compacted(1200)));
        assertEquals("{\"compact_revision\":1200}\n", json(p -> p.compacted(1200)));
    }

    @Test
    void jobList() {
        Instant fire = Instant.parse("2026-11-29T08:00:00Z");
        List<JobRun> latest = List.of(new JobRun("mail", fire, 17, "app-1", JobState.DONE, fire, fire.plusSeconds(2), "ok"),
                new JobRun("report", fire, 19, "app-2", JobState.RUNNING, fire, null, ""));
        assertEquals("mail, 2026-11-29T08:00:00Z, 17, app-1, DONE, ok\nreport, 2026-11-29T08:00:00Z, 19, app-2, RUNNING, \n",
                simple(p -> p.jobList(latest)));
        assertEquals("{\"jobs\":[{\"job\":\"mail\",\"last_run\":{\"job\":\"mail\",\"fire_time\":\"2026-11-29T08:00:00Z\","
                + "\"token\":17,\"instance\":\"app-1\",\"state\":\"DONE\",\"start\":\"2026-11-29T08:00:00Z\","
                + "\"end\":\"2026-11-29T08:00:02Z\",\"outcome\":\"ok\"}},{\"job\":\"report\",\"last_run\":{\"job\":"
                + "\"report\",\"fire_time\":\"2026-11-29T08:00:00Z\",\"token\":19,\"instance\":\"app-2\",\"state\":"
                + "\"RUNNING\",\"start\":\"2026-11-29T08:00:00Z\",\"outcome\":\"\"}}]}\n", json(p -> p.jobList(latest)));
        assertEquals("""
                +--------+----------------------+-------+----------+---------+---------+
                |  JOB   |    LAST FIRE TIME    | TOKEN | INSTANCE |  STATE  | OUTCOME |
                +--------+----------------------+-------+----------+---------+---------+
                | mail   | 2026-11-29T08:00:00Z |    17 | app-1    | DONE    | ok      |
                | report | 2026-11-29T08:00:00Z |    19 | app-2    | RUNNING |         |
                +--------+----------------------+-------+----------+---------+---------+
                """, table(p -> p.jobList(latest)));
        assertEquals("no recorded runs of job 'mial' under rota/jobs/; jobs there: mail, report (rotactl jobs list)",
                JobsCommand.unknownJob("mial", "rota/jobs", latest));
        assertEquals("no recorded runs of job 'mail' under demo/1/jobs/, and no job has run there; if the application "
                + "sets its own prefix (SingletonJob.Builder.prefix), pass it with --prefix",
                JobsCommand.unknownJob("mail", "demo/1/jobs", List.of()));
    }

    private static KeyValue kv(String key, String value, long lease) {
        return new KeyValue(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), 3, 4, 2, lease);
    }

    private static LeaseTimeToLive ttl() {
        return new LeaseTimeToLive(0x15, Duration.ofSeconds(10), Duration.ofSeconds(7), List.of("a", "b"));
    }

    private static List<Printer.StatusRow> statusRows() {
        return List.of(new Printer.StatusRow("127.0.0.1:7001",
                        new MemberStatus("127.0.0.1:7001", 1, "n1", "0.1.0", 1, 2, 15, 14, 9, List.of()), null),
                new Printer.StatusRow("127.0.0.1:7003", null, "UNAVAILABLE: connection refused"));
    }

    private static String simple(Consumer<Printer> print) {
        return render(Printer.Format.SIMPLE, print);
    }

    private static String json(Consumer<Printer> print) {
        return render(Printer.Format.JSON, print);
    }

    private static String table(Consumer<Printer> print) {
        return render(Printer.Format.TABLE, print);
    }

    private static String render(Printer.Format format, Consumer<Printer> print) {
        return render(format, false, print);
    }

    private static String render(Printer.Format format, boolean hex, Consumer<Printer> print) {
        StringWriter s = new StringWriter();
        print.accept(format.on(new PrintWriter(s), hex));
        return s.toString().replace(System.lineSeparator(), "\n");
    }

    @Test
    void usersRolesAndAuthInEachFormat() {
        List<io.rota.client.Auth.User> users = List.of(new io.rota.client.Auth.User("alice", List.of("reader-a")),
                new io.rota.client.Auth.User("root", List.of("root")));
        List<io.rota.client.Auth.Permission> perms = List.of(io.rota.client.Auth.Permission.prefix(
                io.rota.client.Auth.PermissionType.READ, "app-a/"));
        io.rota.client.Auth.Status status = new io.rota.client.Auth.Status(true, 7);

        assertEquals("alice\nroot\n", simple(p -> p.userList(users)));
        assertEquals("User: alice\nRoles: reader-a\n", simple(p -> p.user(users.get(0))));
        assertEquals("reader-a\nroot\n", simple(p -> p.roleList(List.of("reader-a", "root"))));
        assertEquals("Role reader-a\n  READ app-a/ (prefix)\n", simple(p -> p.role("reader-a", perms)));
        assertEquals("Authentication Status: true\nAuthRevision: 7\n", simple(p -> p.authStatus(status)));
        assertEquals("Role reader-a deleted.\n", simple(p -> p.authChanged("Role reader-a deleted.")));

        assertEquals("{\"users\":[{\"name\":\"alice\",\"roles\":[\"reader-a\"]},{\"name\":\"root\",\"roles\":[\"root\"]}]}\n",
                json(p -> p.userList(users)));
        assertEquals("{\"name\":\"alice\",\"roles\":[\"reader-a\"]}\n", json(p -> p.user(users.get(0))));
        assertEquals("{\"roles\":[\"reader-a\",\"root\"]}\n", json(p -> p.roleList(List.of("reader-a", "root"))));
        // "app-a/" = YXBwLWEv; the prefix's range end "app-a0" = YXBwLWEw, in base64 as keys everywhere in JSON.
        assertEquals("{\"name\":\"reader-a\",\"root\":false,\"perm\":[{\"perm_type\":\"READ\",\"key\":\"YXBwLWEv\","
                + "\"range_end\":\"YXBwLWEw\"}]}\n", json(p -> p.role("reader-a", perms)));
        assertEquals("{\"name\":\"root\",\"root\":true,\"perm\":[]}\n", json(p -> p.role("root", List.of())));
        assertEquals("{\"enabled\":true,\"auth_revision\":7}\n", json(p -> p.authStatus(status)));
        assertEquals("{\"done\":\"Role reader-a deleted.\"}\n", json(p -> p.authChanged("Role reader-a deleted.")));

        assertEquals(List.of("| alice | reader-a |", "| root  | root     |"),
                table(p -> p.userList(users)).lines().toList().subList(3, 5));
        assertEquals("| reader-a | READ app-a/ (prefix) |", table(p -> p.role("reader-a", perms)).lines().toList().get(3));
        assertEquals("| root | (built in: may do anything) |", table(p -> p.role("root", List.of())).lines().toList().get(3));
        assertEquals("""
                +--------------+---------------+
                | AUTH ENABLED | AUTH REVISION |
                +--------------+---------------+
                | true         |             7 |
                +--------------+---------------+
                """, table(p -> p.authStatus(status)));
        assertEquals("Role reader-a deleted.\n", table(p -> p.authChanged("Role reader-a deleted.")));
    }
}
