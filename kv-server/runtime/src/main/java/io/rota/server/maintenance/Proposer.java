package io.rota.server.maintenance;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.server.lease.LogClock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Proposes a maintenance command on this member while it leads, stamped with its log-clock reading as every
 * leader proposal is ({@link LogClock}). One proposal at a time: a check that finds one in flight skips.
 */
final class Proposer {

    private final RaftDriver<CommandResult> driver;
    private final Clock clock;
    private final Duration timeout;
    private volatile boolean inFlight;

    Proposer(RaftDriver<CommandResult> driver, Clock clock, Duration timeout) {
        this.driver = driver;
        this.clock = clock;
        this.timeout = timeout;
    }

    /** Whether this member leads now (as of the driver's last turn). */
    boolean leading() {
        return driver.leadership() != null;
    }

    /** The leader's term, or 0 if this member does not lead. */
    long term() {
        var leadership = driver.leadership();
        return leadership == null ? 0 : leadership.term();
    }

    boolean inFlight() {
        return inFlight;
    }

    /** Propose {@code command} (its stamp is set here); completes with the result, or fails. */
    CompletableFuture<CommandResult> propose(Command.Builder command) {
        inFlight = true;
        command.setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime()));
        return driver.propose(command.build().toByteArray(), timeout).whenComplete((r, e) -> inFlight = false);
    }
}
