package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.Frame;
import io.rota.proto.RangeRequest;
import io.rota.proto.StatusRequest;
import io.rota.proto.StatusResponse;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The cluster API: each member's status, its health, and the member list. Obtain it from
 * {@link RotaClient#cluster()}. Unlike the other APIs, {@link #status} and {@link #health} ask one given
 * member and do not move on to another when it fails: they are how an operator sees that member.
 */
public final class Cluster {

    /** The key a health check reads (it need not exist: the read proves a ReadIndex round, as etcd's). */
    private static final ByteString HEALTH_KEY = ByteString.copyFrom("health", StandardCharsets.UTF_8);

    private final Calls calls;
    private final ConnectionPool pool;

    Cluster(Calls calls, ConnectionPool pool) {
        this.calls = calls;
        this.pool = pool;
    }

    /**
     * Asks the member at {@code endpoint} for its status, within the client's call timeout.
     *
     * @param endpoint the member's client address, {@code host:port} (need not be one of the client's)
     * @return its status; fails with UNAVAILABLE if it cannot be reached, TIMEOUT if it does not answer
     */
    public CompletableFuture<MemberStatus> statusAsync(String endpoint) {
        return ask(endpoint, Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance()), () -> { })
                .thenApply(f -> status(endpoint, f.getStatusResponse()));
    }

    /**
     * Asks the member at {@code endpoint} for its status and waits.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return its status
     * @throws RotaException UNAVAILABLE if it cannot be reached, TIMEOUT if it does not answer in time
     */
    public MemberStatus status(String endpoint) {
        return Errors.await(statusAsync(endpoint));
    }

    /**
     * Checks that the member at {@code endpoint} can serve a linearizable read (a ReadIndex round with
     * its leader: it is connected to a working majority), within the client's call timeout.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return how long the read took (from sending it, the connection already open); fails with the
     *         member's error, UNAVAILABLE or TIMEOUT
     */
    public CompletableFuture<Duration> healthAsync(String endpoint) {
        long[] sent = new long[1];
        return ask(endpoint, Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(HEALTH_KEY)),
                () -> sent[0] = System.nanoTime())
                .thenApply(f -> Duration.ofNanos(System.nanoTime() - sent[0]));
    }

    /**
     * Checks that the member at {@code endpoint} can serve a linearizable read, and waits.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @return how long the read took
     * @throws RotaException the member's error, UNAVAILABLE or TIMEOUT
     */
    public Duration health(String endpoint) {
        return Errors.await(healthAsync(endpoint));
    }

    /**
     * The members that have published their addresses, asked of whichever member answers.
     *
     * @return the members, by id
     */
    public CompletableFuture<List<Member>> membersAsync() {
        return calls.execute(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance()), false)
                .thenApply(f -> f.getStatusResponse().getMembersList().stream().map(Member::of)
                        .sorted(Comparator.comparingLong(Member::id)).toList());
    }

    /**
     * The members that have published their addresses, and waits.
     *
     * @return the members, by id
     * @throws RotaException on failure
     */
    public List<Member> members() {
        return Errors.await(membersAsync());
    }

    /**
     * One call to one member, no retry elsewhere; a typed error answer fails the future with it.
     * {@code onSend} runs once connected, just before the request goes out.
     */
    private CompletableFuture<Frame> ask(String endpoint, Frame.Builder request, Runnable onSend) {
        long timeoutNanos = calls.callTimeout().toNanos();
        return pool.connection(endpoint)
                .thenCompose(c -> {
                    onSend.run();
                    return c.call(request);
                })
                .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS)
                .handle((frame, e) -> {
                    if (e != null) {
                        throw Errors.of(e, endpoint, endpoint + " did not answer within "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
                    }
                    if (frame.hasError()) {
                        throw Errors.of(frame.getError());
                    }
                    return frame;
                });
    }

    private static MemberStatus status(String endpoint, StatusResponse r) {
        long self = r.getHeader().getMemberId();
        String name = r.getMembersList().stream().filter(m -> m.getId() == self).map(io.rota.proto.Member::getName)
                .findFirst().orElse("");
        return new MemberStatus(endpoint, self, name, r.getVersion(), r.getLeader(), r.getRaftTerm(),
                r.getRaftIndex(), r.getRaftAppliedIndex(), r.getHeader().getRevision(), r.getErrorsList());
    }
}
