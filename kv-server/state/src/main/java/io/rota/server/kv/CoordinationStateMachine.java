package io.rota.server.kv;

import io.rota.proto.AlarmResponse;
import io.rota.proto.CommandResult;
import io.rota.proto.HashKvRequest;
import io.rota.proto.HashKvResponse;
import io.rota.proto.LeaseLeasesResponse;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import io.rota.proto.Member;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RegisteredMember;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.Entry;
import io.rota.raft.core.StateMachine;
import io.rota.server.auth.AuthStore;
import io.rota.server.lease.LeaseListener;
import io.rota.server.lease.LeaseTable;
import io.rota.server.lease.LogClock;
import io.rota.server.session.SessionTable;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Rota's replicated coordination state machine: an etcd v3-style key-value store with transactions,
 * leases and a watch event stream, plus exactly-once client sessions (Raft thesis §6.3).
 *
 * <p>Each COMMAND entry carries a serialized {@link io.rota.proto.Command}; {@link #apply} answers it with a
 * {@link CommandResult} (a typed {@link io.rota.proto.Error} for bad input — never an exception). Apply is a pure
 * function of the entries: time is {@link LogClock}'s log time, which only leaders' monotonic clocks
 * advance (no member's wall clock or flags take part), ids come from entry indexes, and everything is
 * bounded by {@link Limits}.
 *
 * <p>Not thread-safe: the Raft driver's thread calls {@link #apply}, {@link #capture}, {@link #restore}
 * and the read-side methods ({@link #range}, {@link #timeToLive}, {@link #leases}, {@link #history}),
 * which the server uses for linearizable reads after a ReadIndex and which are not replicated. Only a
 * capture's {@code serialize} runs on another thread (the driver's snapshot thread), and it reads nothing
 * of this object.
 *
 * <p>This class is the facade: it owns the state's parts and hands each job to one collaborator of this
 * package (design HS70) — {@link Dispatcher} applies a command (sessions included), with {@link KeyWrites},
 * {@link LeaseCommands}, {@link MemberRegistry}, {@link QuotaAndAlarms} and {@link ApplyAuthorization};
 * {@link StateImage} writes and restores the image; {@link Queries} answers the read side.
 */
public final class CoordinationStateMachine implements StateMachine<CommandResult> {

    private final KvStore store;
    private final LeaseTable leases;
    private final LogClock clock = new LogClock();
    /** Users, roles and permissions (issue 15): replicated like everything here, read by the auth gate. */
    private final AuthStore auth = new AuthStore();
    /** What apply means for the runtime, carried out after each batch (issue 30): never thrown into apply. */
    private final Effects effects = new Effects();
    private final MemberRegistry members;
    private final QuotaAndAlarms quota;
    private final Dispatcher dispatcher;
    private final StateImage stateImage;
    private final Queries queries;
    /** The last entry applied (any type): what a capture is as of (issue 18: backups report it). */
    private long appliedIndex;
    private long appliedTerm;

    public CoordinationStateMachine(Limits limits) {
        Objects.requireNonNull(limits, "limits");
        this.store = new KvStore(limits);
        this.leases = new LeaseTable(limits.maxLeases());
        SessionTable sessions = new SessionTable(limits.maxSessions(), limits.sessionTtlMs(),
                limits.rememberedResponsesPerSession(), limits.rememberedBytesPerSession(),
                limits.rememberedBytesTotal());
        this.members = new MemberRegistry(store, effects);
        this.quota = new QuotaAndAlarms(store);
        ApplyAuthorization authorization = new ApplyAuthorization(auth, leases, store);
        KeyWrites keys = new KeyWrites(limits, store, leases, effects);
        LeaseCommands leaseCommands = new LeaseCommands(limits, leases, store, keys, clock, authorization, effects);
        this.dispatcher = new Dispatcher(clock, sessions, authorization, quota, keys, leaseCommands, members, auth,
                store, effects);
        this.stateImage = new StateImage(store, clock, leases, sessions, members, quota, auth, effects);
        this.queries = new Queries(store, leases, clock, authorization);
    }

    /** Who hears about each written revision (the watch hub). */
    public void setListener(StoreListener listener) {
        effects.setStoreListener(listener);
    }

    /** Who hears about changes of the member registry and the published members (the server's peer table). */
    public void setRegistryListener(MemberRegistryListener registryListener) {
        effects.setRegistryListener(registryListener);
    }

    /** Who hears about each lease renewal and removal (the leader's lease keeper). */
    public void setLeaseListener(LeaseListener leaseListener) {
        effects.setLeaseListener(leaseListener);
    }

    @Override
    public List<CommandResult> apply(List<Entry> committed) {
        List<CommandResult> results = new ArrayList<>(committed.size());
        for (Entry e : committed) {
            results.add(e.type() != Entry.Type.COMMAND ? null : dispatcher.apply(e.index(), e.term(), e.data()));
            appliedIndex = e.index();
            appliedTerm = e.term();
        }
        effects.carryOut();
        return results;
    }

    /** The caller a request of {@code user} is applied as (null: auth disabled, anonymous). */
    public static String caller(String user) {
        return ApplyAuthorization.caller(user);
    }

    // ---- snapshot (StateImage) ------------------------------------------------------------------------

    /**
     * The whole state, sorted, no map fields: equal states give equal bytes (see {@link StateImage}). The
     * capture is taken on the driver thread; its {@code serialize} streams it on the snapshot thread.
     */
    @Override
    public Capture capture() {
        return stateImage.capture(appliedIndex, appliedTerm);
    }

    /**
     * The whole image as a message: what a backup streams (issue 18). Driver thread only; the same
     * reference copy as {@link #capture}, so as cheap.
     */
    public StoreSnapshot image() {
        return stateImage.image(appliedIndex, appliedTerm);
    }

    /**
     * Replace the whole state by an image streamed from {@link #capture()} (or, from a data directory of
     * before streamed images, one message). It comes through checksummed storage or transport, so a
     * malformed one is a bug or corruption: it is read whole and refused before anything changes.
     */
    @Override
    public void restore(InputStream snapshot) throws IOException {
        StoreSnapshot image = StoreImage.read(snapshot);
        stateImage.restore(image);
        appliedIndex = image.getAppliedIndex();
        appliedTerm = image.getAppliedTerm();
        effects.carryOut();
    }

    // ---- read side (Queries; not replicated) ----------------------------------------------------------

    /**
     * A Range at the applied state.
     *
     * @throws StoreException INVALID_ARGUMENT, REQUEST_TOO_LARGE or COMPACTED
     */
    public RangeResponse range(RangeRequest req) {
        return queries.range(req);
    }

    /**
     * etcd's HashKV over this member's applied state (see {@link KvStore#hash}).
     *
     * @throws StoreException COMPACTED (older than the history) or INVALID_ARGUMENT (a future revision)
     */
    public HashKvResponse hashKv(HashKvRequest req) {
        return queries.hashKv(req);
    }

    /**
     * TimeToLive at the applied log time: remaining = deadline − log time, where the deadline was set by
     * the last grant, keep-alive or checkpoint. Log time moves with entries (the leader checkpoints live
     * leases every half second), so the answer may be that much too long — never too short.
     *
     * @throws StoreException LEASE_NOT_FOUND
     */
    public LeaseTimeToLiveResponse timeToLive(LeaseTimeToLiveRequest req) {
        return queries.timeToLive(req, "");
    }

    /**
     * {@link #timeToLive(LeaseTimeToLiveRequest)} as asked by {@code caller} (a client's read, issue 33): while
     * auth is enabled, another caller's lease is answered LEASE_NOT_FOUND unless the caller is root.
     */
    public LeaseTimeToLiveResponse timeToLive(LeaseTimeToLiveRequest req, String caller) {
        return queries.timeToLive(req, caller);
    }

    /** All live leases, by id. */
    public LeaseLeasesResponse leases() {
        return queries.leases("");
    }

    /** The live leases {@code caller} may see (issue 33): while auth is enabled its own, or all for root. */
    public LeaseLeasesResponse leases(String caller) {
        return queries.leases(caller);
    }

    /** Retained events from {@code startRevision} on, or COMPACTED; for the watch hub. */
    public HistoryRead history(long startRevision) {
        return queries.history(startRevision);
    }

    /**
     * Every live lease with its granted TTL, its latest renewal and the time left at the applied log time:
     * where a new leader's lease keeper starts its deadlines (etcd's checkpointed remaining TTL). Only
     * replicated durations enter it, no member's wall clock (issue 11, hole 2).
     */
    public List<StoreSnapshot.LeaseImage> leaseImages() {
        return queries.leaseImages();
    }

    /** The armed alarms, for AlarmRequest GET (read side) and every alarm command's answer. */
    public AlarmResponse alarms() {
        return quota.alarms();
    }

    /** Whether NOSPACE is armed (the leader's quota check does not propose it twice). */
    public boolean noSpace() {
        return quota.noSpace();
    }

    /** What the space quota compares with --quota-backend-bytes (see {@link KvStore#accountedBytes}). */
    public long accountedBytes() {
        return store.accountedBytes();
    }

    /** The history's compact revision: reads and watches must be above it. */
    public long compactRevision() {
        return store.history().compactRevision();
    }

    /** The last applied entry's index (what a capture is as of). */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** The last applied entry's term. */
    public long appliedTerm() {
        return appliedTerm;
    }

    /** Live keys, for /metrics. */
    public int keyCount() {
        return store.size();
    }

    /** Live leases, for /metrics. */
    public int leaseCount() {
        return leases.size();
    }

    /** The member registry (issue 13), by id, removed members included. */
    public List<RegisteredMember> registry() {
        return members.registry();
    }

    /** The published members, by id. */
    public List<Member> members() {
        return members.members();
    }

    /** The auth state (its {@link AuthStore#state()} may be read from any thread). */
    public AuthStore auth() {
        return auth;
    }

    public long revision() {
        return store.revision();
    }

    /** The log time of the last applied command (see {@link LogClock}). */
    public long nowMs() {
        return clock.nowMs();
    }
}
