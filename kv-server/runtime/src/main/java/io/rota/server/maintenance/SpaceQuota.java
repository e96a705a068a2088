package io.rota.server.maintenance;

import io.rota.proto.AlarmCommand;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AlarmType;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.server.kv.CoordinationStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The space quota (etcd's {@code --quota-backend-bytes}): on the leader, once per tick, compare the state
 * machine's accounted size with the quota; past it, and NOSPACE not armed yet, propose an AlarmCommand that
 * arms it. The alarm is replicated, so every member refuses the same writes (the state machine decides which,
 * see {@code CoordinationStateMachine}); the quota itself is this member's flag and never enters the state
 * machine, which must not depend on any member's flags.
 *
 * <p>Checked per tick, not per write, so the default write path pays nothing: writes within one tick of
 * crossing the quota still pass, so the quota may be overshot by one tick of writes (bounded by the
 * leader's uncommitted-bytes limit). A disarmed alarm while still over the quota is armed again at the next
 * tick, as etcd does.
 */
public final class SpaceQuota implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SpaceQuota.class);

    private final CoordinationStateMachine stateMachine;
    private final RaftDriver<CommandResult> driver;
    private final Proposer proposer;
    private final long quotaBytes;
    private final long memberId;
    private final ScheduledExecutorService timer;
    private ScheduledFuture<?> task;

    public SpaceQuota(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, long quotaBytes,
                      long memberId, ScheduledExecutorService timer, Clock clock, Duration requestTimeout) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.proposer = new Proposer(driver, clock, requestTimeout);
        this.quotaBytes = quotaBytes;
        this.memberId = memberId;
        this.timer = timer;
    }

    /** Check every {@code interval} (the server passes one tick). */
    public void start(Duration interval) {
        task = timer.scheduleWithFixedDelay(this::check, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One check (timer thread): read the size on the driver thread, arm NOSPACE if over. */
    void check() {
        if (!proposer.leading() || proposer.inFlight()) {
            return;
        }
        driver.readLocal(() -> stateMachine.noSpace() ? -1L : stateMachine.accountedBytes()).thenAccept(bytes -> {
            if (bytes <= quotaBytes || !proposer.leading() || proposer.inFlight()) {
                return;
            }
            log.warn("space quota exceeded: {} bytes accounted, over --quota-backend-bytes {}; arming the NOSPACE"
                    + " alarm (writes that add data are refused until 'rotactl alarm disarm')", bytes, quotaBytes);
            proposer.propose(Command.newBuilder().setAlarm(AlarmCommand.newBuilder()
                    .setAction(AlarmRequest.AlarmAction.ACTIVATE).setMemberId(memberId).setAlarm(AlarmType.NOSPACE)
                    .setAccountedBytes(bytes).setQuotaBytes(quotaBytes)))
                    .whenComplete((r, e) -> {
                        if (e != null) {
                            log.info("arming NOSPACE did not commit ({}); the next check tries again", e.toString());
                        }
                    });
        });
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }
}
