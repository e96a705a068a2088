package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.Compare;
import io.rota.proto.CompactionRequest;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseLeasesRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseStatus;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionKeepAliveRequest;
import io.rota.proto.SessionRef;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two users who distrust each other (issue 33's "Done when"), on three real member processes with auth enabled
 * and per-user quotas ({@code --max-leases-per-user} {@value #LEASE_QUOTA}, {@code --max-sessions-per-user}
 * {@value #SESSION_QUOTA}): alice (READWRITE {@code alice/}) and bob (READWRITE {@code bob/}).
 *
 * <p>{@link #bobCannotTouchAnythingOfAlices} is the two-user fuzz: seeded ({@code fuzz.seed}), {@code
 * fuzz.distrust.requests} (default 2,000) well-formed requests by bob, each to a random member, aimed at alice's
 * keys, leases (ids she holds and guesses near them), sessions (her id or guesses, with bob's own secret or random
 * ones), her lock key, watches, transactions (compares and either branch touching {@code alice/}), root-only calls
 * and forged tokens, while alice runs her own workload through a session. Every attempt must be refused with the
 * typed error its kind calls for; at the end alice's keys, leases (alive, same granted TTL), session (its last
 * answer still remembered) and watch (exactly her own writes, in order) match a model, and no member exited. The
 * seed is printed, and every failure names it.
 */
@Tag("process")
class DistrustingUsersProcessTest {

    private static final int LEASE_QUOTA = 4;
    private static final int SESSION_QUOTA = 3;
    private static final long REQUESTS = Long.getLong("fuzz.distrust.requests", 2_000);
    private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    /** Answers that mean "not applied, try again": a cross-user attempt is sent again, never counted as allowed. */
    private static final Set<Error.Code> TRANSIENT = Set.of(Error.Code.UNAVAILABLE, Error.Code.TIMEOUT,
            Error.Code.NOT_LEADER);

    private static Path dir;
    private static ProcessCluster cluster;

    @BeforeAll
    static void start() throws IOException {
        dir = Files.createTempDirectory("rota-DistrustingUsersProcessTest");
        cluster = ProcessCluster.start(dir, 3, "--max-leases-per-user", "" + LEASE_QUOTA,
                "--max-sessions-per-user", "" + SESSION_QUOTA);
        cluster.awaitLeader();
        try (RotaClient root = RotaClient.builder().endpoints(cluster.endpoints()).credentials("root", "root-pw")
                .callTimeout(DEADLINE).build()) {
            Auth auth = root.auth();
            AuthProcessTest.once(() -> auth.addUser("root", "root-pw".toCharArray()));
            AuthProcessTest.once(() -> auth.grantRole("root", "root"));
            for (String user : List.of("alice", "bob")) {
                AuthProcessTest.once(() -> auth.addRole(user + "-rw"));
                auth.grantPermission(user + "-rw", Auth.Permission.prefix(Auth.PermissionType.READWRITE, user + "/"));
                AuthProcessTest.once(() -> auth.addUser(user, (user + "-pw").toCharArray()));
                AuthProcessTest.once(() -> auth.grantRole(user, user + "-rw"));
            }
            auth.enable();
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** One user's raw connections, one per member, each logged in. */
    private static final class User implements AutoCloseable {
        final String name;
        final List<FrameClient> members = new ArrayList<>();
        final List<String> tokens = new ArrayList<>();

        User(String name) {
            this.name = name;
            for (int i = 0; i < cluster.size(); i++) {
                FrameClient raw = new FrameClient(new InetSocketAddress("127.0.0.1", cluster.clientPort(i)));
                members.add(raw);
                Frame login = raw.call(Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder().setAuthenticate(
                        AuthenticateRequest.newBuilder().setName(name).setPassword(name + "-pw"))));
                assertFalse(login.hasError(), login::toString);
                tokens.add(login.getAuthResponse().getToken());
            }
        }

        /** {@code request} through member {@code member}, sent again while the answer says it was not applied. */
        Frame call(int member, Frame.Builder request) {
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (true) {
                Frame answer = members.get(member).call(request.clone().setAuthToken(tokens.get(member)));
                if (!answer.hasError() || !TRANSIENT.contains(answer.getError().getCode())
                        || System.nanoTime() - deadline > 0) {
                    return answer;
                }
            }
        }

        Frame ok(int member, Frame.Builder request) {
            Frame answer = call(member, request);
            assertFalse(answer.hasError(), () -> name + " " + request.getBodyCase() + " (seed " + SEED + "): " + answer);
            return answer;
        }

        long grant(int member, long ttl) {
            return ok(member, Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(ttl)))
                    .getLeaseGrantResponse().getID();
        }

        void revoke(int member, long lease) {
            ok(member, Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(lease)));
        }

        RegisterSessionResponse register(int member) {
            return ok(member, Frame.newBuilder().setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance()))
                    .getRegisterSessionResponse();
        }

        List<Long> leases(int member) {
            return ok(member, Frame.newBuilder().setLeaseLeasesRequest(LeaseLeasesRequest.getDefaultInstance()))
                    .getLeaseLeasesResponse().getLeasesList().stream().map(LeaseStatus::getID).toList();
        }

        @Override
        public void close() {
            members.forEach(FrameClient::close);
        }
    }

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static Frame.Builder put(String key, String value, long lease) {
        return Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(b(key)).setValue(b(value)).setLease(lease));
    }

    private static void assertCode(Error.Code code, Frame answer, String what) {
        assertTrue(answer.hasError(), what + " was allowed (seed " + SEED + "): " + answer);
        assertEquals(code, answer.getError().getCode(), what + " (seed " + SEED + "): " + answer);
    }

    @Test
    @DisplayName("another user's lease is answered as no lease on every member — revoke, keep-alive, time-to-live,"
            + " attaching a key, listing — even one that holds no key")
    void anotherUsersLeaseIsNotFoundOnEveryMember() {
        try (User alice = new User("alice"); User bob = new User("bob")) {
            long keyless = alice.grant(0, 60);
            long holding = alice.grant(0, 60);
            alice.ok(0, put("alice/held", "h", holding));
            for (int m = 0; m < cluster.size(); m++) {
                for (long lease : new long[] {keyless, holding}) {
                    String what = "bob's calls on alice's lease " + lease + " through member " + m;
                    assertCode(Error.Code.LEASE_NOT_FOUND, bob.call(m, Frame.newBuilder().setLeaseRevokeRequest(
                            LeaseRevokeRequest.newBuilder().setID(lease))), what + ": revoke");
                    assertCode(Error.Code.LEASE_NOT_FOUND, bob.call(m, Frame.newBuilder().setLeaseKeepAliveRequest(
                            LeaseKeepAliveRequest.newBuilder().setID(lease))), what + ": keep-alive");
                    assertCode(Error.Code.LEASE_NOT_FOUND, bob.call(m, Frame.newBuilder().setLeaseTimeToLiveRequest(
                            LeaseTimeToLiveRequest.newBuilder().setID(lease).setKeys(true))), what + ": time-to-live");
                    assertCode(Error.Code.LEASE_NOT_FOUND, bob.call(m, put("bob/attached", "x", lease)), what + ": put");
                }
                List<Long> listed = bob.leases(m);
                assertFalse(listed.contains(keyless) || listed.contains(holding), "bob lists alice's leases: " + listed);
            }
            for (long lease : new long[] {keyless, holding}) {
                LeaseTimeToLiveResponse ttl = alice.ok(1, Frame.newBuilder().setLeaseTimeToLiveRequest(
                        LeaseTimeToLiveRequest.newBuilder().setID(lease).setKeys(true))).getLeaseTimeToLiveResponse();
                assertTrue(ttl.getTTL() > 0, "alice's lease is alive: " + ttl);
                alice.revoke(0, lease);
            }
        }
    }

    @Test
    @DisplayName("past --max-leases-per-user a user's grant is refused, naming the flag; another user still grants")
    void leaseQuotaPerUser() {
        try (User alice = new User("alice"); User bob = new User("bob")) {
            List<Long> bobs = new ArrayList<>();
            for (int i = 0; i < LEASE_QUOTA; i++) {
                bobs.add(bob.grant(i % cluster.size(), 60));
            }
            Frame refused = bob.members.get(1).call(Frame.newBuilder().setAuthToken(bob.tokens.get(1))
                    .setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(60)));
            assertCode(Error.Code.UNAVAILABLE, refused, "bob's grant past his quota");
            assertTrue(refused.getError().getMessage().contains("--max-leases-per-user"), refused::toString);
            long alices = alice.grant(2, 60);
            bob.revoke(0, bobs.remove(0));
            bobs.add(bob.grant(2, 60));
            bobs.forEach(l -> bob.revoke(0, l));
            alice.revoke(0, alices);
        }
    }

    @Test
    @DisplayName("past --max-sessions-per-user a user's own oldest session is evicted, never another user's")
    void sessionQuotaEvictsTheUsersOwn() {
        try (User alice = new User("alice"); User bob = new User("bob")) {
            RegisterSessionResponse alices = alice.register(0);
            List<RegisterSessionResponse> bobs = new ArrayList<>();
            for (int i = 0; i <= SESSION_QUOTA; i++) {
                bobs.add(bob.register(i % cluster.size()));
            }
            assertCode(Error.Code.SESSION_EXPIRED, bob.call(1, put("bob/s", "x", 0).setSession(ref(bobs.get(0), 1))),
                    "bob's oldest session after he registered one past his quota");
            alice.ok(1, put("alice/s", "x", 0).setSession(ref(alices, 1)));
            bob.ok(2, put("bob/s", "x", 0).setSession(ref(bobs.get(SESSION_QUOTA), 1)));
        }
    }

    private static SessionRef ref(RegisterSessionResponse session, long sequence) {
        return SessionRef.newBuilder().setClientId(session.getClientId()).setSequence(sequence)
                .setSecret(session.getSecret()).build();
    }

    /** What bob tries, and the refusal each kind must get. */
    private enum Attack {
        PUT_HER_KEY(Error.Code.PERMISSION_DENIED), DELETE_HER_PREFIX(Error.Code.PERMISSION_DENIED),
        READ_HER_PREFIX(Error.Code.PERMISSION_DENIED), TXN_COMPARES_HER_KEY(Error.Code.PERMISSION_DENIED),
        TXN_FAILURE_DELETES_HER_KEY(Error.Code.PERMISSION_DENIED), STEAL_HER_LOCK(Error.Code.PERMISSION_DENIED),
        REVOKE_HER_LEASE(Error.Code.LEASE_NOT_FOUND), KEEP_HER_LEASE_ALIVE(Error.Code.LEASE_NOT_FOUND),
        READ_HER_LEASE(Error.Code.LEASE_NOT_FOUND), ATTACH_TO_HER_LEASE(Error.Code.LEASE_NOT_FOUND),
        TXN_ATTACHES_TO_HER_LEASE(Error.Code.LEASE_NOT_FOUND), LIST_LEASES(null),
        USE_HER_SESSION(Error.Code.SESSION_EXPIRED), KEEP_HER_SESSION_ALIVE(Error.Code.SESSION_EXPIRED),
        WATCH_HER_PREFIX(Error.Code.PERMISSION_DENIED), COMPACT(Error.Code.PERMISSION_DENIED),
        FORGED_TOKEN(Error.Code.INVALID_AUTH_TOKEN);

        final Error.Code refusal;

        Attack(Error.Code refusal) {
            this.refusal = refusal;
        }
    }

    @Test
    @DisplayName("the two-user fuzz: every attempt of bob on alice's keys, leases, sessions, locks, watches and txns is"
            + " refused, and none changes them")
    void bobCannotTouchAnythingOfAlices() throws Exception {
        System.out.println("DistrustingUsersProcessTest: seed " + SEED + " (-Dfuzz.seed=" + SEED + " replays bob's"
                + " requests), " + REQUESTS + " requests");
        Random random = new Random(SEED);
        Map<Attack, Integer> tally = new TreeMap<>();
        try (User alice = new User("alice"); User bob = new User("bob");
             FrameClient watcher = new FrameClient(new InetSocketAddress("127.0.0.1", cluster.clientPort(2)))) {
            // Alice: a lock-like key on a lease she keeps alive, a key on an idle lease, keys, a session, a watch.
            long kept = alice.grant(0, 20);
            long idle = alice.grant(1, 600);
            List<Long> hers = List.of(kept, idle);
            Map<String, String> model = new TreeMap<>();
            Map<String, Long> leaseOf = new TreeMap<>();
            alice.ok(0, put("alice/lock/1", "holder", kept));
            alice.ok(0, put("alice/held", "h", idle));
            model.put("alice/lock/1", "holder");
            leaseOf.put("alice/lock/1", kept);
            model.put("alice/held", "h");
            leaseOf.put("alice/held", idle);
            RegisterSessionResponse session = alice.register(0);
            long sequence = 0;
            Frame lastAnswer = null;

            Frame watchLogin = watcher.call(Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder().setAuthenticate(
                    AuthenticateRequest.newBuilder().setName("alice").setPassword("alice-pw"))));
            long revision = alice.ok(2, Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(b("alice/"))
                    .setRangeEnd(b("alice0")))).getRangeResponse().getHeader().getRevision();
            long watch = watcher.send(Frame.newBuilder().setAuthToken(watchLogin.getAuthResponse().getToken())
                    .setWatchRequest(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                            .setKey(b("alice/")).setRangeEnd(b("alice0")).setStartRevision(revision + 1))));
            Frame created = watcher.next(watch);
            assertTrue(created.hasWatchResponse() && created.getWatchResponse().getCreated(), created::toString);
            List<String> expectedEvents = new ArrayList<>();

            RegisterSessionResponse bobs = bob.register(1);
            long lastKeepAlive = System.nanoTime();
            for (long i = 0; i < REQUESTS; i++) {
                if (System.nanoTime() - lastKeepAlive > TimeUnit.SECONDS.toNanos(3)) {
                    alice.ok(random.nextInt(3), Frame.newBuilder().setLeaseKeepAliveRequest(
                            LeaseKeepAliveRequest.newBuilder().setID(kept)));
                    lastKeepAlive = System.nanoTime();
                }
                if (random.nextInt(10) == 0) {
                    String key = "alice/k" + random.nextInt(5);
                    String value = "v" + i;
                    lastAnswer = alice.ok(random.nextInt(3), put(key, value, 0).setSession(SessionRef.newBuilder()
                            .setClientId(session.getClientId()).setSecret(session.getSecret()).setSequence(++sequence)
                            .setFirstIncomplete(sequence)));
                    model.put(key, value);
                    leaseOf.put(key, 0L);
                    expectedEvents.add(key + "=" + value);
                }
                Attack attack = Attack.values()[random.nextInt(Attack.values().length)];
                tally.merge(attack, 1, Integer::sum);
                int member = random.nextInt(3);
                long herLease = random.nextInt(4) == 0 ? guess(random, hers) : hers.get(random.nextInt(2));
                String what = "request " + i + " " + attack + " through member " + member;
                if (attack == Attack.LIST_LEASES) {
                    List<Long> listed = bob.leases(member);
                    assertTrue(listed.stream().noneMatch(hers::contains), what + " lists alice's leases (seed " + SEED
                            + "): " + listed);
                    continue;
                }
                Frame.Builder request = attack(attack, random, herLease, session, bobs, revision);
                Frame answer = attack == Attack.FORGED_TOKEN
                        ? bob.members.get(member).call(request) : bob.call(member, request);
                assertCode(attack.refusal, answer, what);
            }
            System.out.println("DistrustingUsersProcessTest: seed " + SEED + ", attempts refused by kind: " + tally);

            // Alice's keys, with their leases, are the model's.
            RangeRequest all = RangeRequest.newBuilder().setKey(b("alice/")).setRangeEnd(b("alice0")).build();
            List<KeyValue> kvs = alice.ok(0, Frame.newBuilder().setRangeRequest(all)).getRangeResponse().getKvsList();
            assertEquals(model, kvs.stream().collect(Collectors.toMap(kv -> kv.getKey().toStringUtf8(),
                    kv -> kv.getValue().toStringUtf8(), (a, b) -> a, TreeMap::new)), "alice's keys (seed " + SEED + ")");
            for (KeyValue kv : kvs) {
                assertEquals((long) leaseOf.get(kv.getKey().toStringUtf8()), kv.getLease(), "the lease of "
                        + kv.getKey().toStringUtf8() + " (seed " + SEED + ")");
            }
            // Her leases: alive, listed, the TTLs she was granted.
            assertTrue(alice.leases(1).containsAll(hers), "alice's leases are listed (seed " + SEED + ")");
            for (long lease : hers) {
                LeaseTimeToLiveResponse ttl = alice.ok(2, Frame.newBuilder().setLeaseTimeToLiveRequest(
                        LeaseTimeToLiveRequest.newBuilder().setID(lease))).getLeaseTimeToLiveResponse();
                assertEquals(lease == kept ? 20 : 600, ttl.getGrantedTTL(), ttl::toString);
                assertTrue(ttl.getTTL() > 0 && ttl.getTTL() <= ttl.getGrantedTTL(), "alice's lease " + lease
                        + " (seed " + SEED + "): " + ttl);
            }
            // Her session: its last answer is still remembered, and it takes a new sequence.
            if (lastAnswer != null) {
                Frame replay = alice.ok(0, put("alice/replayed", "never applied", 0).setSession(SessionRef.newBuilder()
                        .setClientId(session.getClientId()).setSecret(session.getSecret()).setSequence(sequence)
                        .setFirstIncomplete(sequence)));
                assertEquals(lastAnswer.getPutResponse().getHeader().getRevision(),
                        replay.getPutResponse().getHeader().getRevision(), "the remembered answer (seed " + SEED + ")");
            }
            alice.ok(1, put("alice/zz-end", "end", 0).setSession(SessionRef.newBuilder().setClientId(session.getClientId())
                    .setSecret(session.getSecret()).setSequence(++sequence).setFirstIncomplete(sequence)));
            expectedEvents.add("alice/zz-end=end");
            // Her watch: exactly her own writes, in order, up to the last one.
            List<String> events = new ArrayList<>();
            while (!events.contains("alice/zz-end=end")) {
                Frame f = watcher.poll(watch, DEADLINE);
                assertNotNull(f, "alice's watch went quiet before her last write (seed " + SEED + "); got " + events);
                assertFalse(f.hasError() || f.getWatchResponse().getCanceled(), "alice's watch ended: " + f);
                for (Event e : f.getWatchResponse().getEventsList()) {
                    events.add(e.getKv().getKey().toStringUtf8() + "=" + e.getKv().getValue().toStringUtf8());
                }
            }
            assertEquals(expectedEvents, events, "alice's watch saw only her writes (seed " + SEED + ")");
        }
        for (int i = 0; i < cluster.size(); i++) {
            assertTrue(cluster.isAlive(i), "member " + i + " exited (seed " + SEED + ")");
        }
        assertEquals(List.of(), cluster.selfExits(), "seed " + SEED);
    }

    /** An id near one of alice's leases (ids are entry indexes, so sequential-ish; bob holds none here). */
    private static long guess(Random random, List<Long> hers) {
        long id = hers.get(random.nextInt(hers.size())) + random.nextInt(7) - 3;
        return Math.max(1, id);
    }

    private static Frame.Builder attack(Attack attack, Random random, long herLease, RegisterSessionResponse hers,
                                        RegisterSessionResponse bobs, long revision) {
        String herKey = "alice/k" + random.nextInt(5);
        RequestOp bobPut = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("bob/x"))
                .setValue(b("x"))).build();
        return switch (attack) {
            case PUT_HER_KEY -> put(herKey, "bob was here", 0).setPutRequest(PutRequest.newBuilder().setKey(b(herKey))
                    .setValue(b("bob was here")).setPrevKv(random.nextBoolean()));
            case DELETE_HER_PREFIX -> Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                    .setKey(b("alice/")).setRangeEnd(b("alice0")));
            case READ_HER_PREFIX -> Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(b("alice/"))
                    .setRangeEnd(b("alice0")).setSerializable(random.nextBoolean()));
            case TXN_COMPARES_HER_KEY -> Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(b(herKey)).setTarget(Compare.Target.VERSION)
                            .setResult(Compare.Result.GREATER)).addSuccess(bobPut));
            case TXN_FAILURE_DELETES_HER_KEY -> Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addSuccess(bobPut).addFailure(RequestOp.newBuilder().setRequestTxn(TxnRequest.newBuilder()
                            .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                                    .setKey(b("alice/held")))))));
            case STEAL_HER_LOCK -> random.nextBoolean()
                    ? Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder().setKey(b("alice/lock/1")))
                    : put("alice/lock/2", "bob", 0);
            case REVOKE_HER_LEASE -> Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(herLease));
            case KEEP_HER_LEASE_ALIVE -> Frame.newBuilder().setLeaseKeepAliveRequest(
                    LeaseKeepAliveRequest.newBuilder().setID(herLease));
            case READ_HER_LEASE -> Frame.newBuilder().setLeaseTimeToLiveRequest(LeaseTimeToLiveRequest.newBuilder()
                    .setID(herLease).setKeys(random.nextBoolean()));
            case ATTACH_TO_HER_LEASE -> put("bob/attached", "x", herLease);
            case TXN_ATTACHES_TO_HER_LEASE -> Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addSuccess(bobPut).addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                            .setKey(b("bob/attached")).setLease(herLease))));
            case USE_HER_SESSION -> put("bob/s", "x", 0).setSession(SessionRef.newBuilder()
                    .setClientId(guessSession(random, hers, bobs))
                    .setSequence(1 + random.nextInt(100)).setSecret(random.nextBoolean() ? bobs.getSecret()
                            : ByteString.copyFrom(randomBytes(random, 16))));
            case KEEP_HER_SESSION_ALIVE -> Frame.newBuilder().setSessionKeepAliveRequest(SessionKeepAliveRequest
                    .newBuilder().setClientId(hers.getClientId()).setSecret(random.nextBoolean() ? bobs.getSecret()
                            : ByteString.copyFrom(randomBytes(random, 16))));
            case WATCH_HER_PREFIX -> Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder().setCreateRequest(
                    WatchCreateRequest.newBuilder().setKey(b(random.nextBoolean() ? "alice/" : herKey))
                            .setRangeEnd(b(random.nextBoolean() ? "alice0" : "")).setStartRevision(revision)));
            case COMPACT -> Frame.newBuilder().setCompactionRequest(CompactionRequest.newBuilder().setRevision(revision));
            case FORGED_TOKEN -> put("alice/k0", "forged", 0).setAuthToken(random.nextBoolean() ? ""
                    : "alice." + Long.toHexString(random.nextLong()));
            case LIST_LEASES -> fail("listing is checked by its answer");
        };
    }

    /** Her session's id, or one just above it (ids are entry indexes), never bob's own. */
    private static long guessSession(Random random, RegisterSessionResponse hers, RegisterSessionResponse bobs) {
        long id = random.nextBoolean() ? hers.getClientId() : hers.getClientId() + random.nextInt(5) + 1;
        return id == bobs.getClientId() ? hers.getClientId() : id;
    }

    private static byte[] randomBytes(Random random, int n) {
        byte[] out = new byte[n];
        random.nextBytes(out);
        return out;
    }
}
