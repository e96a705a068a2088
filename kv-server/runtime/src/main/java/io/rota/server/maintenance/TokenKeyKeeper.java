package io.rota.server.maintenance;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.server.authgate.AuthGate;
import io.rota.server.auth.AuthState;
import io.rota.server.kv.CoordinationStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Gives a restored cluster a token key (issue 33). No backup holds the key tokens are signed with, so whoever
 * reads a backup cannot mint tokens; a cluster restored from one comes up with auth enabled and no key, and
 * refuses logins (UNAVAILABLE, retry) until its leader proposes a fresh random key. This keeper, on the leader,
 * checks once a second and proposes one rotation at a time.
 */
public final class TokenKeyKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TokenKeyKeeper.class);
    static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);

    private final CoordinationStateMachine stateMachine;
    private final AuthGate gate;
    private final Proposer proposer;
    private final ScheduledExecutorService timer;
    private ScheduledFuture<?> task;

    public TokenKeyKeeper(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine, AuthGate gate,
                          ScheduledExecutorService timer, Clock clock, Duration requestTimeout) {
        this.stateMachine = stateMachine;
        this.gate = gate;
        this.proposer = new Proposer(driver, clock, requestTimeout);
        this.timer = timer;
    }

    public void start() {
        long ms = CHECK_INTERVAL.toMillis();
        task = timer.scheduleWithFixedDelay(this::check, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** One check (timer thread): the applied auth state is read without the driver (one volatile read). */
    void check() {
        AuthState s = stateMachine.auth().state();
        if (!s.enabled() || s.hasTokenKey() || !proposer.leading() || proposer.inFlight()) {
            return;
        }
        log.info("auth is enabled without a token key (a cluster restored from a backup): proposing a new key;"
                + " logins are refused until it is applied");
        proposer.propose(Command.newBuilder().setAuth(gate.rotateTokenKeyCommand())).whenComplete((r, e) -> {
            if (e != null) {
                log.info("the new token key did not commit ({}); the next check tries again", e.toString());
            } else if (r.hasError()) {
                log.warn("the new token key was refused: {}", r.getError().getMessage());
            } else {
                log.info("new token key applied (auth revision {}): logins work again", r.getAuth().getAuthRevision());
            }
        });
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }
}
