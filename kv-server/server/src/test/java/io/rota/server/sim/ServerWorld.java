package io.rota.server.sim;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.RegisteredMember;
import io.rota.proto.facts.HostPort;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Message;
import io.rota.server.api.Forwarder;
import io.rota.server.kv.MemberRegistryListener;
import io.rota.server.lease.LeaseListener;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * A deterministic world of Rota members and clients (issue 11): the server layer — driver, state machine,
 * lease keeper, router, forwarding — runs here on simulated time, with a clock per member that drifts
 * (within {@link #MAX_DRIFT_PPM}) and whose wall clock is stepped forward and back, next to crashes,
 * pauses, partitions (also between clients and members), and a network that delays, loses and
 * duplicates. One seed gives one run.
 *
 * <p>After every event it checks, and a failure names the seed:
 * <ol>
 *   <li><b>replicas agree</b>: every member computes the same result for the same log index (no member's
 *       flags or clocks enter apply);</li>
 *   <li><b>no early expiry</b>: no lease's expiry applies before the safe-until its holder computed from
 *       its last acknowledged grant or keep-alive (send time + TTL, less the drift margin, on the
 *       client's own clock);</li>
 *   <li><b>one lock holder</b>: at most one client holds the lock whose safe-until has not passed;</li>
 *   <li><b>deadlines</b>: every request a member accepted is answered by its deadline (plus a tick);</li>
 *   <li><b>exactly once</b>: a session's write is executed once however often it is retried, and every
 *       retry gets the same answer;</li>
 *   <li><b>linearizable reads</b>: a read sees every write acknowledged before it was sent;</li>
 *   <li><b>apply is total</b> (issue 30): no member stops itself (its driver's {@code failure()}), every
 *       command entry gets a result — its op's response or a typed {@code Error} — and, in the
 *       apply-totality sweep ({@link #applySweep}), the members' whole states (a hash of the state
 *       machine's image) are equal at the same applied index;</li>
 *   <li><b>one holder per recipe lock</b> (issue 31, {@link RecipeClient}): for every lock name, no two holders
 *       are inside their safe windows at the same true time, whichever clients and whichever of their locks —
 *       a holder is inside from when it learned it holds until the first of its safe-until, its release being
 *       sent, or its learning of the loss (docs/locks.md, "Safe-until").</li>
 *   <li><b>once per key</b> (issue 31, {@link OnceClient}): at most one claim of a once-key completes (its
 *       DONE acknowledged); the claims themselves are judged by invariant 8 like locks;</li>
 *   <li><b>a session answers only its own</b> (issue 31, in the apply-totality sweep): an entry that names a
 *       session registered by another caller, or without that session's secret, is answered SESSION_EXPIRED —
 *       never a remembered response, an execution or any other refusal that would tell it something.</li>
 * </ol>
 */
final class ServerWorld {

    /** Bound on any clock's rate error, members' and clients' alike. */
    static final long MAX_DRIFT_PPM = 200;
    private static final long MS = 1_000_000L;
    private static final long CLIENT_TIMEOUT_NANOS = 7_000 * MS;

    final SimLoop loop = new SimLoop();
    final long seed;
    final SplittableRandom random;
    final List<SimMember> members = new ArrayList<>();
    private final Configuration configuration;
    private final Map<Long, String> addresses = new TreeMap<>();
    private final boolean[][] linkDown;
    private final boolean[] clientsCut;
    private final List<SimClient> clients = new ArrayList<>();
    private final ArrayDeque<String> trace = new ArrayDeque<>();
    /** Directed tests: peer messages matching this are held back until released, in order. */
    private Predicate<Message> holdIf = m -> false;
    private final List<Map.Entry<Message, Runnable>> held = new ArrayList<>();
    /** Directed tests: no loss, duplication or stragglers. */
    boolean quietNetwork;
    /**
     * The apply-totality sweep (issue 30): members compare their whole state every {@link #STATE_EVERY}
     * indexes, and {@link #proposeGenerated} appends {@link CommandGenerator}'s commands to the log.
     */
    boolean applySweep;
    static final long STATE_EVERY = 8;
    /** The recipe simulation (issue 31, {@link RecipeSimulation}): only for the replay hint of a failure. */
    boolean recipes;
    /** What apply's last-resort guard (issue 30) says of an entry whose apply threw. */
    static final String BUG_REFUSAL = "(a bug in Rota";
    CommandGenerator generator;
    long generatedProposed;
    long generatedResults;
    long generatedRefused;
    long generatedRaftOutcomes;
    long stateChecks;
    /** Invariant 9: generated entries under another caller's session, or with a wrong secret, checked refused. */
    long foreignSessionRefusals;

    // --- what the invariants remember ---
    private final Map<Long, Long> resultHashByIndex = new HashMap<>();
    private final Map<Long, Long> stateHashByIndex = new HashMap<>();
    /** The first image seen at each of the latest indexes, to say what differs when two hashes do. */
    private final Map<Long, StoreSnapshot> recentImages = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, StoreSnapshot> eldest) {
            return size() > 64;
        }
    };
    /** Lease id → the latest true time until which its holder was told it may rely on it. */
    private final Map<Long, Long> safeUntil = new HashMap<>();
    private final Map<Long, Long> expiredAt = new HashMap<>();
    private final Set<Long> revoked = new HashSet<>();
    /** Lock holds: client → true time its hold ends (its safe-until, or its release). */
    private final Map<SimClient, Long> holds = new LinkedHashMap<>();
    /** Invariant 8: lock name → holder → true time its safe window ends. */
    private final Map<String, Map<String, Long>> recipeHolds = new TreeMap<>();
    /** Invariant 10: once-key → the claim whose completion was acknowledged first. */
    private final Map<String, String> onceDone = new TreeMap<>();
    /** The recipe simulation's operation failures and reactions by kind, for its summary. */
    final Map<String, Long> recipeEvents = new TreeMap<>();
    /** Whether NOSPACE was last proposed armed (to note only the first of the repeated disarms). */
    private boolean noSpaceArmed;
    /** The lease that expired last: the id a restarting client asks for when it grants an explicit id. */
    long lastExpiredLease;
    private final List<Tracked> accepted = new ArrayList<>();
    private long maxAckedRevision;
    private long events;
    /** The first violation: kept, because a throw inside the driver's turn is caught by its fail-stop. */
    private AssertionError violation;
    long acknowledgedWrites;
    long reads;
    long expiries;
    long skippedExpiries;
    long lockAcquisitions;

    /** A request a member's router accepted, with the deadline it set on its own clock. */
    private record Tracked(SimMember member, int incarnation, long localDeadline, CompletableFuture<Frame> answer,
                           String what) {
    }

    /**
     * Members log as real ones do; a sweep of thousands of runs would print every election, so the
     * simulator keeps Rota's loggers at ERROR (a fail-stop still shows) while worlds exist.
     */
    static {
        ((Logger) LoggerFactory.getLogger("io.rota")).setLevel(Level.ERROR);
    }

    ServerWorld(long seed, int size) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
        this.linkDown = new boolean[size][size];
        this.clientsCut = new boolean[size];
        Set<Long> voters = new HashSet<>();
        for (int i = 0; i < size; i++) {
            voters.add(i + 1L);
            addresses.put(i + 1L, "sim:" + (i + 1));
        }
        configuration = new Configuration(voters);
        for (int i = 0; i < size; i++) {
            SimClock clock = new SimClock(loop, random.nextLong(1L << 40), driftPpm(), random.nextLong(-60_000, 60_000));
            int electionTicks = random.nextInt(3) == 0 ? 15 : 10;
            members.add(new SimMember(this, i, clock, electionTicks, seed * 1_000_003L + i));
        }
    }

    long driftPpm() {
        return random.nextLong(-MAX_DRIFT_PPM, MAX_DRIFT_PPM + 1);
    }

    void start() {
        members.forEach(m -> m.start(configuration, addresses));
    }

    void addClient(SimClient c) {
        clients.add(c);
        c.start();
    }

    // ---------------------------------------------------------------------------------------------
    // Network
    // ---------------------------------------------------------------------------------------------

    private long delay() {
        int r = random.nextInt(1000);
        if (quietNetwork) {
            return MS;
        }
        if (r < 5) {
            return random.nextLong(200 * MS, 1_500 * MS);   // a straggler: arrives after much has changed
        }
        return random.nextLong(MS / 10, 3 * MS);
    }

    void sendPeer(SimMember from, Message m) {
        int to = (int) m.to() - 1;
        if (to < 0 || to >= members.size() || linkDown[from.index][to] || !quietNetwork && random.nextInt(100) == 0) {
            return;
        }
        int copies = !quietNetwork && random.nextInt(200) == 0 ? 2 : 1;
        for (int k = 0; k < copies; k++) {
            SimMember target = members.get(to);
            Runnable arrive = () -> {
                if (target.alive && !linkDown[from.index][to]) {
                    target.scheduler.execute(() -> target.deliver(m));
                }
            };
            if (holdIf.test(m)) {
                held.add(Map.entry(m, arrive));
            } else {
                loop.after(delay(), arrive);
            }
        }
    }

    /** Hold back every peer message matching {@code which} (directed tests). */
    void hold(Predicate<Message> which) {
        holdIf = which;
    }

    /** Deliver the held messages matching {@code which}, oldest first; the count delivered. */
    int release(Predicate<Message> which) {
        int n = 0;
        for (Iterator<Map.Entry<Message, Runnable>> it = held.iterator(); it.hasNext(); ) {
            Map.Entry<Message, Runnable> h = it.next();
            if (which.test(h.getKey())) {
                it.remove();
                loop.after(MS, h.getValue());
                n++;
            }
        }
        return n;
    }

    /** Deliver the oldest held message matching {@code which}; 1 if there was one, else 0. */
    int releaseOldest(Predicate<Message> which) {
        for (Iterator<Map.Entry<Message, Runnable>> it = held.iterator(); it.hasNext(); ) {
            Map.Entry<Message, Runnable> h = it.next();
            if (which.test(h.getKey())) {
                it.remove();
                loop.after(MS, h.getValue());
                return 1;
            }
        }
        return 0;
    }

    /** The member that leads now, or null. */
    SimMember leader() {
        for (SimMember m : members) {
            if (m.alive && m.driver.leadership() != null) {
                return m;
            }
        }
        return null;
    }

    Forwarder forwarder(SimMember from) {
        return new Forwarder() {
            @Override
            public CompletableFuture<Frame> forward(String address, Frame frame, Duration timeout) {
                CompletableFuture<Frame> out = new CompletableFuture<>();
                int to = Integer.parseInt(address.substring(address.indexOf(':') + 1)) - 1;
                SimMember target = members.get(to);
                int fromIncarnation = from.incarnation;
                if (!target.alive || linkDown[from.index][to]) {
                    loop.after(Math.min(timeout.toNanos(), 50 * MS), () -> reply(from, fromIncarnation,
                            () -> out.completeExceptionally(new Forwarder.Unreachable("cannot reach " + address))));
                    return out;
                }
                loop.after(from.clock.trueTimeOf(from.clock.nanoTime() + timeout.toNanos()) - loop.now(),
                        () -> reply(from, fromIncarnation, () -> out.completeExceptionally(
                                new IOException("forwarded call timed out"))));
                Frame forwarded = frame.toBuilder().setForwarded(true).build();
                loop.after(delay(), () -> {
                    if (!target.alive || linkDown[from.index][to]) {
                        return;  // lost: the caller's timeout answers
                    }
                    int targetIncarnation = target.incarnation;
                    target.scheduler.execute(() -> handle(target, forwarded, "forwarded " + frame.getBodyCase())
                            .whenComplete((answer, e) -> loop.after(delay(), () -> {
                                if (target.incarnation == targetIncarnation && !linkDown[to][from.index]) {
                                    reply(from, fromIncarnation, () -> {
                                        if (e == null) {
                                            out.complete(answer);
                                        } else {
                                            out.completeExceptionally(e);
                                        }
                                    });
                                }
                            })));
                });
                return out;
            }

            @Override
            public void close() {
            }
        };
    }

    private static void reply(SimMember to, int incarnation, Runnable r) {
        if (to.alive && to.incarnation == incarnation) {
            to.scheduler.execute(r);
        }
    }

    /** A router call, tracked for the deadline invariant. */
    private CompletableFuture<Frame> handle(SimMember m, Frame request, String what) {
        long localDeadline = m.clock.nanoTime() + SimMember.REQUEST_TIMEOUT.toNanos();
        CompletableFuture<Frame> answer = m.router.handle(request);
        if (!answer.isDone()) {
            accepted.add(new Tracked(m, m.incarnation, localDeadline, answer, what));
        }
        return answer;
    }

    /**
     * A client's call to member {@code to}: delivered after a network delay unless the member is down or cut
     * from clients; answered through {@code done} with the frame, or with null and a reason (the client's
     * own timeout, or a connection the member's crash closed).
     */
    void call(SimClient client, int to, Frame request, BiConsumer<Frame, String> done) {
        SimMember target = members.get(to);
        boolean[] finished = {false};
        BiConsumer<Frame, String> once = (f, why) -> {
            if (!finished[0]) {
                finished[0] = true;
                done.accept(f, why);
            }
        };
        loop.at(client.clock.trueTimeOf(client.clock.nanoTime() + CLIENT_TIMEOUT_NANOS),
                () -> once.accept(null, "client timeout"));
        if (!target.alive || clientsCut[to]) {
            loop.after(random.nextLong(MS, 20 * MS), () -> once.accept(null, "cannot connect to n" + target.id));
            return;
        }
        int incarnation = target.incarnation;
        loop.after(delay(), () -> {
            if (!target.alive || target.incarnation != incarnation || clientsCut[to]) {
                loop.after(MS, () -> once.accept(null, "connection to n" + target.id + " lost"));
                return;
            }
            target.scheduler.execute(() -> handle(target, request, request.getBodyCase().toString())
                    .whenComplete((answer, e) -> loop.after(delay(), () -> {
                        if (target.incarnation != incarnation || clientsCut[to]) {
                            once.accept(null, "connection to n" + target.id + " lost");
                        } else if (e != null) {
                            once.accept(null, "server failed the call: " + e);
                        } else {
                            once.accept(answer, null);
                        }
                    })));
        });
    }

    // ---------------------------------------------------------------------------------------------
    // Faults
    // ---------------------------------------------------------------------------------------------

    void crash(int i, long downNanos) {
        SimMember m = members.get(i);
        if (!m.alive) {
            return;
        }
        note("crash n" + m.id + " for " + downNanos / MS + " ms");
        m.crash();
        for (SimMember other : members) {
            if (other != m && other.alive && random.nextBoolean()) {
                // The transport's connection-refused probe (design D20), as it would see it.
                loop.after(random.nextLong(MS, 50 * MS), () -> {
                    if (other.alive) {
                        other.scheduler.execute(() -> other.reportPeerDown(m.id));
                    }
                });
            }
        }
        int incarnation = m.incarnation;
        loop.after(downNanos, () -> {
            if (!m.alive && m.incarnation == incarnation) {   // healAll may have restarted it already
                note("restart n" + m.id);
                m.start(configuration, addresses);
            }
        });
    }

    void pause(int i, long nanos) {
        SimMember m = members.get(i);
        if (m.alive) {
            note("pause n" + m.id + " for " + nanos / MS + " ms");
            m.scheduler.pauseUntil(loop.now() + nanos);
        }
    }

    /** Cut member {@code i} from the other members (and, if {@code clientsToo}, from clients). */
    void isolate(int i, boolean clientsToo, long nanos) {
        note("isolate n" + (i + 1) + (clientsToo ? " from members and clients" : " from members") + " for "
                + nanos / MS + " ms");
        for (int j = 0; j < members.size(); j++) {
            if (j != i) {
                linkDown[i][j] = true;
                linkDown[j][i] = true;
            }
        }
        clientsCut[i] |= clientsToo;
        loop.after(nanos, () -> {
            note("heal n" + (i + 1));
            for (int j = 0; j < members.size(); j++) {
                linkDown[i][j] = false;
                linkDown[j][i] = false;
            }
            clientsCut[i] = false;
        });
    }

    void stepWallClock(int i, long deltaMs) {
        note("n" + (i + 1) + " wall clock steps " + deltaMs + " ms");
        members.get(i).clock.stepWall(deltaMs);
    }

    void setRate(int i, long ppm) {
        note("n" + (i + 1) + " clock rate " + ppm + " ppm");
        members.get(i).clock.setRatePpm(ppm);
    }

    void healAll() {
        note("heal everything");
        for (boolean[] row : linkDown) {
            Arrays.fill(row, false);
        }
        Arrays.fill(clientsCut, false);
        for (int i = 0; i < members.size(); i++) {
            SimMember m = members.get(i);
            if (!m.alive) {
                m.start(configuration, addresses);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Running and checking
    // ---------------------------------------------------------------------------------------------

    /** Run events until true time {@code untilNanos}, checking the invariants after each. */
    void runUntil(long untilNanos) {
        while (loop.step(untilNanos)) {
            if (violation != null) {
                throw violation;
            }
            checkStopped();
            if (++events % 64 == 0) {
                checkDeadlines();
            }
        }
        checkDeadlines();
    }

    long now() {
        return loop.now();
    }

    void note(String what) {
        if (trace.size() == 60) {
            trace.removeFirst();
        }
        trace.addLast(String.format("%8.3f s  %s", loop.now() / 1e9, what));
    }

    void fail(String what) {
        if (violation != null) {
            throw violation;
        }
        violation = new AssertionError("seed " + seed + " (" + members.size() + " members): " + what
                + "\n  at " + String.format("%.3f s", loop.now() / 1e9) + "; last events:\n    "
                + String.join("\n    ", trace) + "\n  replay: -Dserversim." + (applySweep ? "apply.seed=" : recipes ? "recipe.seed=" : "seed=")
                + seed + " -Dserversim.members="
                + members.size());
        throw violation;
    }

    /** Invariant 1, 2 and 5, on each entry a member applied. */
    void observeApplied(SimMember m, List<Entry> committed, List<CommandResult> results) {
        for (int k = 0; k < committed.size(); k++) {
            Entry e = committed.get(k);
            CommandResult r = results.get(k);
            if (r == null) {
                if (e.type() == Entry.Type.COMMAND) {
                    fail("n" + m.id + " applied the command at index " + e.index() + " without a result");
                }
                continue;
            }
            long hash = Arrays.hashCode(r.toByteArray());
            Long first = resultHashByIndex.putIfAbsent(e.index(), hash);
            if (first != null && first != hash) {
                fail("replicas disagree at index " + e.index() + ": n" + m.id + " computed " + r.toString()
                        .replace('\n', ' '));
            }
            if (first != null) {
                continue;
            }
            Command c;
            try {
                c = Command.parseFrom(e.data());
            } catch (InvalidProtocolBufferException ex) {
                c = null;
            }
            checkShape(m, e, c, r);
            if (c == null) {
                continue;
            }
            if (c.hasLeaseExpire() && r.hasLeaseExpire()) {
                if (r.getLeaseExpire().getRenewedSince()) {
                    skippedExpiries++;
                } else {
                    leaseExpired(c.getLeaseExpire().getID());
                }
            }
            if (c.hasLeaseRevoke() && !r.hasError()) {
                revoked.add(c.getLeaseRevoke().getID());
            }
            if (c.hasPut() && c.getPut().getKey().toStringUtf8().startsWith("w/") && r.hasPut()
                    && r.getPut().hasPrevKv()) {
                fail("a session write was executed twice: " + c.getSession() + " " + c.getPut().getKey().toStringUtf8());
            }
        }
    }

    private void leaseExpired(long lease) {
        expiries++;
        long now = loop.now();
        expiredAt.put(lease, now);
        lastExpiredLease = lease;
        note("lease " + lease + " expired");
        Long until = safeUntil.get(lease);
        if (until != null && until > now) {
            fail("lease " + lease + " expired " + (until - now) / MS + " ms before its holder's safe-until");
        }
    }

    /** A client was told (grant or keep-alive) that its lease lasts until true time {@code until}. */
    void safeUntil(long lease, long until) {
        safeUntil.merge(lease, until, Math::max);
        Long expired = expiredAt.get(lease);
        if (expired != null && until > expired && !revoked.contains(lease)) {
            fail("lease " + lease + " was acknowledged as alive until " + until / MS + " ms but had expired at "
                    + expired / MS + " ms");
        }
    }

    /**
     * Lease {@code lease} was granted to a client: an explicit id may name a lease that ended before, whose
     * expiry and safe-until belong to its earlier holder.
     */
    void leaseGranted(long lease) {
        expiredAt.remove(lease);
        revoked.remove(lease);
        safeUntil.remove(lease);
    }

    void countRecipe(String what) {
        recipeEvents.merge(what, 1L, Long::sum);
    }

    /**
     * Invariant 8: {@code holder} just learned it holds {@code lock}, inside its safe window until true time
     * {@code until}; no other holder of that lock may still be inside its own.
     */
    void lockHeld(String lock, String holder, long until) {
        lockAcquisitions++;
        note(holder + " holds " + lock + " for " + (until - loop.now()) / MS + " ms");
        Map<String, Long> holders = recipeHolds.computeIfAbsent(lock, k -> new TreeMap<>());
        holders.put(holder, until);
        checkOneHolder(lock, holder, "learned it holds");
    }

    /** Invariant 8: a confirmed keep-alive moved {@code holder}'s safe-until; a window already ended stays ended. */
    void lockHoldExtended(String lock, String holder, long until) {
        Map<String, Long> holders = recipeHolds.get(lock);
        Long end = holders == null ? null : holders.get(holder);
        if (end != null && end > loop.now() && until > end) {
            holders.put(holder, until);
            checkOneHolder(lock, holder, "extended its safe window");
        }
    }

    /** Invariant 8: {@code holder}'s window ended (its release sent, or it learned the loss). */
    /**
     * Invariant 10 (issue 31, {@link OnceClient}): {@code holder}'s completion of once-key {@code key} was
     * acknowledged; no other claim of the key may have completed — the work is once per key, and a claimer
     * that lost its claim (paused past its lease while another claimed) cannot mark it DONE.
     */
    void onceCompleted(String key, String holder) {
        countRecipe("once completions");
        String first = onceDone.putIfAbsent(key, holder);
        if (first != null) {
            fail("once-key " + key + " completed twice: by " + first + ", then by " + holder);
        }
    }

    void lockHoldEnded(String lock, String holder) {
        Map<String, Long> holders = recipeHolds.get(lock);
        if (holders != null && holders.remove(holder) != null) {
            note(holder + " no longer holds " + lock);
        }
    }

    private void checkOneHolder(String lock, String holder, String what) {
        long now = loop.now();
        Map<String, Long> holders = recipeHolds.get(lock);
        holders.values().removeIf(end -> end <= now);
        for (Map.Entry<String, Long> other : holders.entrySet()) {
            if (!other.getKey().equals(holder)) {
                fail("two holders of " + lock + ": " + holder + " " + what + " (inside until "
                        + String.format("%.3f s", holders.getOrDefault(holder, now) / 1e9) + ") while " + other.getKey()
                        + " is inside its safe window for " + (other.getValue() - now) / MS + " ms more");
            }
        }
    }

    /**
     * Arm ({@code true}) or disarm the NOSPACE alarm through the leader's driver, as the leader's space-quota
     * check proposes it (issue 18): writes that grow the state are refused NO_SPACE meanwhile.
     */
    void proposeNoSpace(boolean arm) {
        SimMember m = leader();
        if (m == null) {
            return;
        }
        if (arm || noSpaceArmed) {
            note((arm ? "arm" : "disarm") + " NOSPACE through n" + m.id);
        }
        noSpaceArmed = arm;
        byte[] entry = Command.newBuilder().setAlarm(io.rota.proto.AlarmCommand.newBuilder()
                .setAction(arm ? io.rota.proto.AlarmRequest.AlarmAction.ACTIVATE
                        : io.rota.proto.AlarmRequest.AlarmAction.DEACTIVATE)
                .setMemberId(arm ? m.id : 0).setAlarm(io.rota.proto.AlarmType.NOSPACE)).build().toByteArray();
        int incarnation = m.incarnation;
        m.scheduler.execute(() -> {
            if (m.alive && m.incarnation == incarnation) {
                m.driver.propose(entry, SimMember.REQUEST_TIMEOUT);
            }
        });
    }

    /** Invariant 3: {@code c} just learned it holds the lock, until true time {@code until}. */
    void acquired(SimClient c, long until) {
        lockAcquisitions++;
        long now = loop.now();
        for (Map.Entry<SimClient, Long> h : holds.entrySet()) {
            if (h.getKey() != c && h.getValue() > now) {
                fail(c + " acquired the lock while " + h.getKey() + " still holds it for " + (h.getValue() - now) / MS
                        + " ms");
            }
        }
        holds.put(c, until);
        note(c + " holds the lock");
    }

    void holdExtended(SimClient c, long until) {
        holds.computeIfPresent(c, (k, v) -> Math.max(v, until));
    }

    void released(SimClient c) {
        holds.remove(c);
    }

    /** Invariant 5 (answers) and 6. */
    void acknowledgedWrite(long revision) {
        acknowledgedWrites++;
        maxAckedRevision = Math.max(maxAckedRevision, revision);
    }

    long maxAckedRevision() {
        return maxAckedRevision;
    }

    void readAnswered(long revisionSeen, long mustSee, String who) {
        reads++;
        if (revisionSeen < mustSee) {
            fail(who + " read revision " + revisionSeen + " after a write at revision " + mustSee
                    + " was acknowledged: a stale read");
        }
    }

    /** Invariant 4: an accepted request still open a tick past its deadline, on a running member. */
    private void checkDeadlines() {
        checkStopped();
        for (Iterator<Tracked> it = accepted.iterator(); it.hasNext(); ) {
            Tracked t = it.next();
            if (t.answer().isDone() || t.member().incarnation != t.incarnation() || !t.member().alive) {
                it.remove();
                continue;
            }
            long slack = 3 * SimMember.TICK.toNanos();
            if (!t.member().scheduler.recentlyPaused(slack)
                    && t.member().clock.nanoTime() - t.localDeadline() > slack) {
                fail("n" + t.member().id + " accepted a " + t.what() + " and did not answer it by its deadline");
            }
        }
    }

    /** Invariant 7: no member stopped itself (the driver's fail-stop), checked after every event. */
    private void checkStopped() {
        for (SimMember m : members) {
            Throwable failure = m.alive ? m.driver.failure() : null;
            if (failure != null) {
                StringBuilder stack = new StringBuilder();
                for (StackTraceElement f : failure.getStackTrace()) {
                    stack.append("\n    at ").append(f);
                    if (f.getClassName().startsWith("io.rota.raft.node.RaftDriver")) {
                        break;   // the driver's turn: below it only the simulator
                    }
                }
                fail("n" + m.id + " stopped itself: " + failure + stack + m.applyingDescription());
            }
        }
    }

    /** Invariant 7 in the sweep: members' whole states agree at the same applied index. */
    void observeState(SimMember m, long index, StoreSnapshot image) {
        stateChecks++;
        long hash = image.hashCode();
        Long first = stateHashByIndex.putIfAbsent(index, hash);
        if (first == null) {
            recentImages.put(index, image);
        } else if (first != hash) {
            StoreSnapshot before = recentImages.get(index);
            fail("replicas disagree at index " + index + ": n" + m.id + "'s state (image hash " + hash
                    + ") is not the first member's (" + first + ")"
                    + (before == null ? "" : difference(before, image)));
        }
    }

    /** The first field (and element) in which two images differ. */
    private static String difference(StoreSnapshot a, StoreSnapshot b) {
        for (com.google.protobuf.Descriptors.FieldDescriptor f : StoreSnapshot.getDescriptor().getFields()) {
            Object x = a.getField(f);
            Object y = b.getField(f);
            if (x.equals(y)) {
                continue;
            }
            if (f.isRepeated()) {
                List<?> xs = (List<?>) x;
                List<?> ys = (List<?>) y;
                for (int i = 0; i < Math.max(xs.size(), ys.size()); i++) {
                    Object xi = i < xs.size() ? xs.get(i) : null;
                    Object yi = i < ys.size() ? ys.get(i) : null;
                    if (!java.util.Objects.equals(xi, yi)) {
                        return "\n  first difference: " + f.getName() + "[" + i + "] of " + xs.size() + "/" + ys.size()
                                + ": first member's " + shorten(xi) + "\n    this member's " + shorten(yi);
                    }
                }
            }
            return "\n  first difference: " + f.getName() + ": first member's " + shorten(x) + "\n    this member's "
                    + shorten(y);
        }
        return "\n  (the images are equal but hash differently)";
    }

    private static String shorten(Object o) {
        String s = String.valueOf(o).replace('\n', ' ');
        return s.length() > 600 ? s.substring(0, 600) + "..." : s;
    }

    /**
     * Append one of {@link #generator}'s commands (or non-commands) to the log straight through the leader's
     * driver, past the router and every admission the leader runs (issue 30); sometimes through a member
     * that is not the leader (refused NOT_LEADER). Its answer must be a result or a Raft outcome.
     */
    void proposeGenerated() {
        SimMember leader = leader();
        if (leader == null || random.nextInt(20) == 0) {
            leader = members.get(random.nextInt(members.size()));
            if (!leader.alive) {
                return;
            }
        }
        SimMember m = leader;
        int incarnation = m.incarnation;
        m.scheduler.execute(() -> {
            if (!m.alive || m.incarnation != incarnation) {
                return;
            }
            byte[] entry = generator.next(m);
            generatedProposed++;
            m.driver.propose(entry, SimMember.REQUEST_TIMEOUT).whenComplete((r, e) -> {
                if (e == null) {
                    generatedResults++;
                    if (r == null) {
                        fail("n" + m.id + " answered a generated command with no result");
                    }
                    if (r.hasError()) {
                        generatedRefused++;
                    }
                } else if (e instanceof io.rota.raft.node.RaftException
                        || e.getCause() instanceof io.rota.raft.node.RaftException) {
                    generatedRaftOutcomes++;
                } else {
                    fail("n" + m.id + "'s proposal of a generated command failed with " + e);
                }
            });
        });
    }

    /**
     * The registry listener a member's state machine is given: the production peer directory, watched. Since
     * issue 30 the state machine carries effects out after each batch and logs, not throws, a failed one; here a
     * failed effect, or a member table that now holds a peer address that is not host:port (the directory would
     * skip it: a member nobody can dial), is a violation.
     */
    MemberRegistryListener watchedRegistryListener(SimMember m, MemberRegistryListener directory) {
        return (registry, published) -> {
            for (RegisteredMember r : registry) {
                if (!r.getRemoved() && !r.getPeerAddress().isEmpty() && !HostPort.isValid(r.getPeerAddress())) {
                    fail("n" + m.id + " applied member " + r.getId() + " with peer address '" + r.getPeerAddress()
                            + "', which no one can dial");
                }
            }
            for (Member p : published) {
                if (!p.getPeerAddress().isEmpty() && !HostPort.isValid(p.getPeerAddress())) {
                    fail("n" + m.id + " applied the publication of member " + p.getId() + " with peer address '"
                            + p.getPeerAddress() + "', which no one can dial");
                }
            }
            try {
                directory.membersChanged(registry, published);
            } catch (RuntimeException e) {
                fail("n" + m.id + "'s peer directory failed on the applied member tables: " + e);
            }
        };
    }

    /** The lease listener (the lease keeper), watched likewise: a failed effect is a violation. */
    LeaseListener watchedLeaseListener(SimMember m, LeaseListener keeper) {
        return new LeaseListener() {
            @Override
            public void renewed(long id, long ttlSeconds, long renewal) {
                try {
                    keeper.renewed(id, ttlSeconds, renewal);
                } catch (RuntimeException e) {
                    fail("n" + m.id + "'s lease keeper failed on lease " + id + "'s renewal: " + e);
                }
            }

            @Override
            public void ended(long id, int keysDeleted) {
                try {
                    keeper.ended(id, keysDeleted);
                } catch (RuntimeException e) {
                    fail("n" + m.id + "'s lease keeper failed on lease " + id + "'s end: " + e);
                }
            }
        };
    }

    /**
     * What an entry's result must look like: the op's own response, or an Error — and not the refusal apply's
     * last-resort guard gives an entry whose apply threw (a bug, logged with its index).
     */
    private void checkShape(SimMember m, Entry e, Command c, CommandResult r) {
        checkSessionOwner(m, e, c, r);
        if (r.hasError()) {
            if (r.getError().getMessage().contains(BUG_REFUSAL)) {
                fail("apply refused the entry at index " + e.index() + " as a bug: " + r.getError().getMessage()
                        + "\n  the command: " + shorten(c));
            }
            return;
        }
        // A session's sequence seen before is answered with the remembered response, whatever the command is.
        boolean sessionReplay = c != null && c.getSession().getClientId() != 0 && !c.hasRegisterSession();
        if (c == null || !sessionReplay && c.getOpCase() == Command.OpCase.OP_NOT_SET) {
            fail("n" + m.id + " applied " + (c == null ? "bytes that are not a command" : "a command without an op")
                    + " at index " + e.index() + " without refusing it: " + r.toString().replace('\n', ' '));
        }
        if (!sessionReplay && r.getResultCase().getNumber() != c.getOpCase().getNumber()) {
            fail("n" + m.id + " answered a " + c.getOpCase() + " at index " + e.index() + " with a "
                    + r.getResultCase());
        }
        if (generator != null && c.hasRegisterSession() && r.hasRegisterSession()) {
            generator.sessions.add(r.getRegisterSession().getClientId());
            generator.secrets.put(r.getRegisterSession().getClientId(), r.getRegisterSession().getSecret());
            generator.owners.put(r.getRegisterSession().getClientId(), c.getCaller());
        }
        if (generator != null && c.hasLeaseGrant() && r.hasLeaseGrant()) {
            generator.leases.add(r.getLeaseGrant().getID());
        }
    }

    /**
     * Invariant 9: an entry under a session registered by another caller, or without the session's secret, gets
     * SESSION_EXPIRED and nothing else. Entries with no caller (proposed before issue 31) are not judged: apply
     * lets them through, so old logs replay alike.
     */
    private void checkSessionOwner(SimMember m, Entry e, Command c, CommandResult r) {
        if (generator == null || c == null || c.hasRegisterSession() || c.getCaller().isEmpty()) {
            return;
        }
        long id = c.getSession().getClientId();
        String owner = generator.owners.get(id);
        if (id == 0 || owner == null) {
            return;
        }
        ByteString secret = generator.secrets.get(id);
        boolean own = owner.equals(c.getCaller()) && !secret.isEmpty() && secret.equals(c.getSession().getSecret());
        if (own) {
            return;
        }
        if (!r.hasError() || r.getError().getCode() != io.rota.proto.Error.Code.SESSION_EXPIRED) {
            fail("n" + m.id + " answered an entry at index " + e.index() + " under session " + id + " (registered by '"
                    + owner + "') from caller '" + c.getCaller() + "'" + (secret.equals(c.getSession().getSecret())
                    ? "" : " with a wrong secret") + " with " + r.toString().replace('\n', ' '));
        }
        foreignSessionRefusals++;
    }

    String summary() {
        String generated = !applySweep ? "" : String.format("; %d generated entries proposed, %d answered (%d refused),"
                + " %d Raft outcomes, %d state comparisons, %d foreign session refusals checked", generatedProposed,
                generatedResults, generatedRefused, generatedRaftOutcomes, stateChecks, foreignSessionRefusals);
        return String.format("%d events, %d writes acked, %d reads, %d lock acquisitions, %d expiries (%d stale dropped)",
                loop.processed(), acknowledgedWrites, reads, lockAcquisitions, expiries, skippedExpiries) + generated;
    }
}
