package io.rota.server.cluster;

import io.rota.proto.Member;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.node.RoleChange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * This member's picture of the cluster, readable from any thread without touching Raft state:
 * <ul>
 *   <li>its role, term and leader, pushed by the driver the moment a Ready reports a change
 *       ({@link RaftDriver#addRoleListener}, on the timer thread, where each change is logged);</li>
 *   <li>its indexes and replication progress ({@link NodeStatus}) and the published members (their client
 *       addresses, where writes are forwarded), refreshed once per Raft tick: they change with every
 *       entry, too often to be worth a push. Listeners run on the timer thread after each refresh.</li>
 * </ul>
 * So {@link #status()} may lag {@link #isLeader()}, {@link #leaderId()} and {@link #term()} by one tick.
 */
public final class ClusterView implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ClusterView.class);

    /** Told after every refresh; {@code previous} is null on the first one. */
    public interface Listener {
        void onRefresh(NodeStatus previous, NodeStatus current);
    }

    private final String name;
    private final RaftDriver<?> driver;
    private final Supplier<List<Member>> membersQuery;
    private final ScheduledExecutorService timer;
    private final Duration interval;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    /** The role the driver last pushed, or null before the first push. */
    private volatile RoleChange role;
    private volatile NodeStatus status;
    private volatile Map<Long, Member> members = Map.of();
    private ScheduledFuture<?> task;

    /**
     * @param membersQuery runs on the driver thread (a serializable read of the state machine's members)
     */
    public ClusterView(String name, RaftDriver<?> driver, Supplier<List<Member>> membersQuery,
                       ScheduledExecutorService timer, Duration interval) {
        this.name = name;
        this.driver = driver;
        this.membersQuery = membersQuery;
        this.timer = timer;
        this.interval = interval;
    }

    public void start() {
        driver.addRoleListener(this::onRoleChange, timer);
        task = timer.scheduleWithFixedDelay(this::refresh, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /** The latest refreshed status, or {@code null} before the first refresh. */
    public NodeStatus status() {
        return status;
    }

    public long memberId() {
        return driver.id();
    }

    public boolean isLeader() {
        RoleChange r = role;
        return r != null && r.isLeader();
    }

    /** The leader's id as last pushed, or {@link RaftNode#NONE}. */
    public long leaderId() {
        RoleChange r = role;
        return r == null ? RaftNode.NONE : r.leaderId();
    }

    public long term() {
        RoleChange r = role;
        return r == null ? 0 : r.term();
    }

    /** Published members, sorted by id. */
    public Map<Long, Member> members() {
        return members;
    }

    /** The client address member {@code id} published, if it has. */
    public Optional<String> clientAddress(long id) {
        return Optional.ofNullable(members.get(id)).map(Member::getClientAddress);
    }

    private void refresh() {
        if (!driver.isRunning()) {
            return;
        }
        CompletableFuture<List<Member>> m = driver.readLocal(membersQuery);
        driver.status().thenCombine(m, (s, list) -> {
            Map<Long, Member> byId = new TreeMap<>();
            list.forEach(member -> byId.put(member.getId(), member));
            members = Collections.unmodifiableMap(byId);
            return s;
        }).thenAcceptAsync(this::update, timer).exceptionally(e -> {
            log.debug("{}: status refresh failed: {}", name, e.toString());
            return null;
        });
    }

    private void update(NodeStatus current) {
        NodeStatus previous = status;
        status = current;
        for (Listener l : listeners) {
            l.onRefresh(previous, current);
        }
    }

    /** Timer thread: pushed by the driver. A term change alone (same role, same leader) is not logged. */
    private void onRoleChange(RoleChange change) {
        RoleChange previous = role;
        role = change;
        if (previous == null || previous.role() != change.role() || previous.leaderId() != change.leaderId()) {
            logRole(change);
        }
    }

    /** DEBUG: the driver's EventLog already says each role and leader change at INFO (design H9); this adds names. */
    private void logRole(RoleChange r) {
        long id = driver.id();
        if (r.role() == Role.LEADER) {
            log.debug("{} (id {}) became the leader in term {}", name, id, r.term());
        } else if (r.leaderId() != RaftNode.NONE) {
            log.debug("{} (id {}) is a follower of {} in term {}", name, id, describe(r.leaderId()), r.term());
        } else {
            log.debug("{} (id {}) knows no leader in term {} ({})", name, id, r.term(),
                    r.role().name().toLowerCase().replace('_', '-'));
        }
    }

    private String describe(long id) {
        Member m = members.get(id);
        return m == null ? "member " + id : m.getName() + " (id " + id + ")";
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }
}
