package io.rota.server;

import io.rota.client.GetResult;
import io.rota.client.RotaClient;
import io.rota.server.fuzz.ClientFrames;
import io.rota.server.fuzz.ClientPortFuzzer;
import io.rota.server.fuzz.PeerPortFuzzer;
import io.rota.server.fuzz.Tally;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fuzzes the client port and the peer port of a real three-member cluster, and checks that the cluster
 * shrugs it off: no member dies or hangs, answers are typed errors on connections that stay usable,
 * malformed input closes only its own connection, the logs stay bounded and free of stack traces, and no
 * acknowledged write is lost.
 *
 * <p>Workers pipeline frames over many short connections ({@link ClientPortFuzzer}, {@link PeerPortFuzzer});
 * meanwhile, every {@value #CHECK_EVERY_SECONDS} s, an SDK client per member writes a key under
 * {@code acked/} through that member and reads it back, /health must be 200, and every revision seen must
 * be at least the last one. Fuzzed writes only touch keys at or above {@code fuzz/}, so the {@code acked/}
 * keys must all be there at the end.
 *
 * <p>{@link #tlsClientPortSurvivesFuzzing} runs the client-port fuzz inside TLS records against a cluster with
 * TLS and client certificates required ({@code fuzz.tls.frames}, default 3,000): the decoders behind the TLS
 * layer get the same abuse, and the SDK checks go over TLS too.
 *
 * <p>{@link #authEnabledMemberSurvivesFuzzing} fuzzes a cluster with auth enabled ({@code fuzz.auth.frames},
 * default 3,000): auth requests and tokens of every shape (ClientFrames), every one refused with a typed
 * error; the SDK checks log in as root, and afterwards auth is still on and its users and roles are unchanged.
 *
 * <p>System properties: {@code fuzz.frames} (default 15,000; the full run is 1,000,000), {@code fuzz.seed}
 * (replays a run's inputs: each worker's stream is seeded from it; the interleaving is not replayed),
 * {@code fuzz.workers} (default 8).
 */
@Tag("process")
class FuzzProcessTest {

    private static final long FRAMES = Long.getLong("fuzz.frames", 15_000);
    private static final long TLS_FRAMES = Long.getLong("fuzz.tls.frames", 3_000);
    private static final long AUTH_FRAMES = Long.getLong("fuzz.auth.frames", 3_000);
    private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());
    private static final int WORKERS = Integer.getInteger("fuzz.workers", 8);
    private static final int MEMBERS = 3;
    private static final int MAX_REQUEST_BYTES = ServerConfig.DEFAULT_MAX_REQUEST_BYTES;
    /** ServerConfig.maxFrameBytes(): the request limit plus room for the envelope. */
    private static final int MAX_FRAME_BYTES = MAX_REQUEST_BYTES + ServerConfig.FRAME_ENVELOPE_BYTES;
    private static final int CHECK_EVERY_SECONDS = 2;
    /** At most one connection claiming a member's identity per this interval (each one displaces the real peer's). */
    private static final long CLAIM_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    /** A non-member cannot raise the term; elections the fuzz provokes may, but not by this much. */
    private static final long MAX_TERM = 10_000;
    /**
     * Log lines a member may write per second of fuzzing, plus start-up: lines a sender causes at will are
     * rate-limited (LogLimiter, 5 a second per kind); connections claiming a member add a few INFO lines each.
     */
    private static final int LOG_LINES_PER_SECOND = 40;
    private static final int LOG_LINES_BASE = 500;
    private static final Pattern TERM = Pattern.compile("\"term\":(\\d+)");

    @TempDir
    Path dir;

    private final Tally tally = new Tally();
    private final AtomicLong framesSent = new AtomicLong();
    private final AtomicLong nextClaim = new AtomicLong(System.nanoTime());
    private final Map<String, String> acked = new LinkedHashMap<>();
    private long maxRevision;
    /** This run's frame budget, its TLS socket factory (null: plaintext), and whether it fuzzes the peer ports. */
    private long frames = FRAMES;
    private javax.net.ssl.SSLSocketFactory tls;
    private boolean fuzzPeers = true;
    /** Auth on: fuzzed auth administration too, and the SDK checks log in as root with this password. */
    private String rootPassword;

    @Test
    void clientAndPeerPortsSurviveFuzzingAndNothingAcknowledgedIsLost() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(dir, MEMBERS)) {
            fuzzAndCheck(cluster, null);
        }
    }

    @Test
    void tlsClientPortSurvivesFuzzing() throws Exception {
        String missing = TlsCluster.unavailable();
        org.junit.jupiter.api.Assumptions.assumeTrue(missing == null,
                () -> "SKIPPED: the TLS fuzz needs openssl to make certificates: " + missing);
        TlsCluster certs = new TlsCluster(dir.resolve("tls"));
        frames = TLS_FRAMES;
        tls = certs.socketFactory();
        fuzzPeers = false;   // a peer port with mutual TLS refuses a stranger at the handshake (PeerTlsTest)
        try (ProcessCluster cluster = ProcessCluster.prepare(dir, MEMBERS, null).memberArgs(certs::memberFlags)) {
            cluster.startAll();
            fuzzAndCheck(cluster, certs.clientOptions());
        }
    }

    @Test
    void authEnabledMemberSurvivesFuzzing() throws Exception {
        frames = AUTH_FRAMES;
        rootPassword = "root-pw";
        try (ProcessCluster cluster = ProcessCluster.start(dir, MEMBERS)) {
            cluster.awaitLeader();
            List<?> usersBefore;
            List<String> rolesBefore;
            try (RotaClient root = RotaClient.builder().endpoints(cluster.endpoints()).credentials("root", rootPassword)
                    .callTimeout(DEADLINE).build()) {
                AuthProcessTest.once(() -> root.auth().addUser("root", rootPassword.toCharArray()));
                AuthProcessTest.once(() -> root.auth().grantRole("root", "root"));
                AuthProcessTest.once(() -> root.auth().addUser("alice", "alice-pw".toCharArray()));
                root.auth().enable();
                cluster.httpCredentials("root", rootPassword);   // /status answers root only now
                usersBefore = root.auth().listUsers();
                rolesBefore = root.auth().listRoles();
            }
            fuzzAndCheck(cluster, null);
            try (RotaClient root = RotaClient.builder().endpoints(cluster.endpoints()).credentials("root", rootPassword)
                    .callTimeout(DEADLINE).build()) {
                assertTrue(root.auth().status().enabled(), "auth is still enabled after the fuzz (seed " + SEED + ")");
                assertEquals(usersBefore, root.auth().listUsers(), "the fuzz changed the users (seed " + SEED + ")");
                assertEquals(rolesBefore, root.auth().listRoles(), "the fuzz changed the roles (seed " + SEED + ")");
            }
            assertTrue(tally.sum("client.errors-by-kind/AUTH.") > 0, "no auth call was fuzzed:\n" + tally.report());
        }
    }

    private void fuzzAndCheck(ProcessCluster cluster, io.rota.client.TlsOptions clientTls) throws Exception {
        System.out.printf("FuzzProcessTest: seed %d (replay with -Dfuzz.seed=%d), %,d frames, %d workers%s%s%n",
                SEED, SEED, frames, WORKERS, tls == null ? "" : ", client port over TLS",
                rootPassword == null ? "" : ", auth enabled");
        long start = System.nanoTime();
        List<RotaClient> viaMember = new ArrayList<>();
        try {
            for (int i = 0; i < MEMBERS; i++) {
                RotaClient.Builder b = RotaClient.builder().endpoints(cluster.endpoint(i)).tls(clientTls)
                        .callTimeout(DEADLINE);
                viaMember.add((rootPassword == null ? b : b.credentials("root", rootPassword)).build());
            }
            checkRound(cluster, viaMember, 0);
            ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int w = 0; w < WORKERS; w++) {
                    long workerSeed = SEED * 31 + w;
                    int firstMember = w % MEMBERS;
                    workers.add(pool.submit(() -> fuzz(cluster, new Random(workerSeed), firstMember)));
                }
                int round = 1;
                for (Future<?> worker : workers) {
                    while (!finished(worker, CHECK_EVERY_SECONDS, "a fuzz worker failed")) {
                        checkRound(cluster, viaMember, round++);
                        if (round % 30 == 0) {
                            System.out.printf("FuzzProcessTest: %,d frames after %d s%n", framesSent.get(),
                                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
                        }
                    }
                }
            } finally {
                pool.shutdownNow();
                pool.awaitTermination(1, TimeUnit.MINUTES);
            }
            checkRound(cluster, viaMember, -1);
            long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
            checkAfterwards(cluster, viaMember, seconds);
            System.out.printf("FuzzProcessTest: seed %d, %,d frames in %d s, %,d acknowledged writes checked, "
                    + "highest revision %d%n%s", SEED, framesSent.get(), seconds, acked.size(), maxRevision,
                    tally.report());
        } finally {
            viaMember.forEach(RotaClient::close);
        }
    }

    /**
     * One worker: sessions on random members and ports until the run's frame budget is spent. The first goes to
     * {@code firstMember} and must be refused there (a peer session the member closes, or on a run without peer
     * fuzzing a client session ending in a length over the limit), so that with at least {@value #MEMBERS}
     * workers every member has malformed input to log, whatever the timing does to the rest of the budget:
     * seed 7005852821018's TLS run gave its leader none (the random sessions that would have reached it came
     * after the budget was spent).
     */
    private void fuzz(ProcessCluster cluster, Random random, int firstMember) {
        ClientPortFuzzer client = new ClientPortFuzzer(random,
                new ClientFrames(random, MEMBERS).authEnabled(rootPassword != null), tally,
                MAX_REQUEST_BYTES, MAX_FRAME_BYTES, DEADLINE).overTls(tls);
        PeerPortFuzzer peer = new PeerPortFuzzer(random, tally, cluster.clusterId(), MEMBERS, DEADLINE);
        ClientPortFuzzer.Tail[] tails = ClientPortFuzzer.Tail.values();
        PeerPortFuzzer.Case[] cases = PeerPortFuzzer.Case.values();
        // A peer session the member must close first: a short run (the auth run's 3,000 frames are some 25
        // sessions) would otherwise fuzz no peer port at all about once in fifty seeds.
        PeerPortFuzzer.Case[] refused = java.util.Arrays.stream(cases)
                .filter(c -> c.serverMustClose() && !c.claimsMember()).toArray(PeerPortFuzzer.Case[]::new);
        if (fuzzPeers) {
            framesSent.addAndGet(peer.session(new InetSocketAddress("127.0.0.1", cluster.peerPort(firstMember)),
                    firstMember + 1, refused[random.nextInt(refused.length)]));
        } else {
            framesSent.addAndGet(client.session(new InetSocketAddress("127.0.0.1", cluster.clientPort(firstMember)),
                    random.nextInt(10), ClientPortFuzzer.Tail.HUGE_LENGTH));
        }
        while (framesSent.get() < frames && !Thread.currentThread().isInterrupted()) {
            int member = random.nextInt(MEMBERS);
            if (!fuzzPeers || random.nextInt(100) < 85) {
                int requests = random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(300);
                ClientPortFuzzer.Tail tail = random.nextInt(3) == 0 ? ClientPortFuzzer.Tail.NONE
                        : tails[random.nextInt(tails.length)];
                if (requests == 0 && tail == ClientPortFuzzer.Tail.NONE) {
                    tail = ClientPortFuzzer.Tail.RANDOM_BYTES;
                }
                framesSent.addAndGet(client.session(new InetSocketAddress("127.0.0.1", cluster.clientPort(member)),
                        requests, tail));
            } else {
                PeerPortFuzzer.Case c = cases[random.nextInt(cases.length)];
                if (c.claimsMember() && !mayClaim()) {
                    c = PeerPortFuzzer.Case.WRONG_CLUSTER;
                }
                framesSent.addAndGet(peer.session(new InetSocketAddress("127.0.0.1", cluster.peerPort(member)),
                        member + 1, c));
            }
        }
    }

    private boolean mayClaim() {
        long now = System.nanoTime();
        long next = nextClaim.get();
        return now - next >= 0 && nextClaim.compareAndSet(next, now + CLAIM_INTERVAL_NANOS);
    }

    /**
     * Whether the worker ended, waiting up to {@code seconds} for it; a worker's failure fails the test with
     * {@code failure} (the well-formed fuzz's doors use it too).
     */
    static boolean finished(Future<?> worker, long seconds, String failure) throws InterruptedException {
        try {
            worker.get(seconds, TimeUnit.SECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new AssertionError(failure, e.getCause());
        }
    }

    /**
     * Every member is alive and healthy, and an SDK client writes a key through it and reads it back within
     * the deadline; revisions never go backwards.
     */
    private void checkRound(ProcessCluster cluster, List<RotaClient> viaMember, int round) {
        for (int i = 0; i < MEMBERS; i++) {
            assertTrue(cluster.isAlive(i), ProcessCluster.name(i) + " died during fuzzing (seed " + SEED
                    + "); see " + cluster.logFile(i));
            int member = i;
            Await.until(DEADLINE, () -> cluster.httpGet(member, "/health").status() == 200,
                    ProcessCluster.name(i) + " /health 200 during fuzzing (seed " + SEED + ")");
            String key = "acked/" + (round < 0 ? "end" : round) + "/" + ProcessCluster.name(i);
            String value = "v" + round + "-" + i;
            long revision = viaMember.get(i).kv().put(key, value).revision();
            observe(revision, "put " + key);
            acked.put(key, value);
            GetResult read = viaMember.get(i).kv().get(key);
            observe(read.revision(), "get " + key);
            assertEquals(value, read.first().orElseThrow().valueString(), key + " read back (seed " + SEED + ")");
        }
    }

    private void observe(long revision, String what) {
        assertTrue(revision >= maxRevision, what + " saw revision " + revision + " after " + maxRevision
                + ": the revision went backwards (seed " + SEED + ")");
        maxRevision = revision;
    }

    private void checkAfterwards(ProcessCluster cluster, List<RotaClient> viaMember, long seconds) throws IOException {
        for (Map.Entry<String, String> e : acked.entrySet()) {
            GetResult read = viaMember.get(0).kv().get(e.getKey());
            observe(read.revision(), "final get " + e.getKey());
            assertEquals(e.getValue(), read.first().map(kv -> kv.valueString()).orElse(null),
                    "acknowledged write " + e.getKey() + " lost or changed (seed " + SEED + ")");
        }
        for (int i = 0; i < MEMBERS; i++) {
            Matcher term = TERM.matcher(cluster.httpGet(i, "/status").body());
            assertTrue(term.find() && Long.parseLong(term.group(1)) < MAX_TERM,
                    ProcessCluster.name(i) + "'s term was driven up: " + cluster.httpGet(i, "/status").body());
            List<String> lines = Files.readAllLines(cluster.logFile(i), StandardCharsets.UTF_8);
            long warn = lines.stream().filter(l -> l.contains(" WARN ")).count();
            long error = lines.stream().filter(l -> l.contains(" ERROR ")).count();
            long stack = lines.stream().filter(l -> l.startsWith("\tat ") || l.startsWith("Caused by")).count();
            tally.add("log." + ProcessCluster.name(i) + "/lines", lines.size());
            tally.add("log." + ProcessCluster.name(i) + "/warn", warn);
            tally.add("log." + ProcessCluster.name(i) + "/error", error);
            tally.add("log." + ProcessCluster.name(i) + "/stack-trace-lines", stack);
            assertEquals(0, stack, ProcessCluster.name(i) + " logged stack traces (seed " + SEED + "); see "
                    + cluster.logFile(i));
            assertEquals(0, error, ProcessCluster.name(i) + " logged errors (seed " + SEED + "); see " + cluster.logFile(i));
            assertTrue(warn > 0, ProcessCluster.name(i) + " refused malformed input without a WARN line (seed " + SEED
                    + "); see " + cluster.logFile(i));
            assertTrue(lines.size() <= LOG_LINES_BASE + LOG_LINES_PER_SECOND * seconds, ProcessCluster.name(i)
                    + " logged " + lines.size() + " lines in " + seconds + " s: a log flood (seed " + SEED + ")");
        }
        if (tally.problemCount() > 0) {
            fail("fuzzing found " + tally.problemCount() + " problems (seed " + SEED + "):\n" + tally.report());
        }
        assertTrue(tally.get("client.batches-answered") > 0 && (!fuzzPeers || tally.sum("peer.closed/") > 0),
                "the fuzz ran no complete session:\n" + tally.report());
    }
}
