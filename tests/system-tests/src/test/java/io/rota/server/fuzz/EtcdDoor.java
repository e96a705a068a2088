package io.rota.server.fuzz;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AuthGrpc;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.LeaseGrpc;
import io.rota.etcd.api.MaintenanceGrpc;
import io.rota.etcd.api.WatchGrpc;
import io.rota.etcd.api.LockGrpc;
import io.rota.etcd.api.ElectionGrpc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The etcd door ({@code --listen-etcd}) with well-formed requests of every method of every service Rota
 * serves there — KV, Watch, Lease, Cluster, Maintenance, Auth, Lock, Election — each request made from the
 * method's request descriptor by {@link WellFormedRequests} and shaped by a {@link DoorGuard}. Every call must
 * end with OK or a status an etcd client can act on: UNKNOWN (but for the election errors etcd itself
 * sends as UNKNOWN), INTERNAL, DATA_LOSS, or an UNAVAILABLE saying
 * "internal error" (EtcdErrors.internal: an exception the door did not expect) is a problem, and so is a
 * unary call that does not finish within the deadline. Calls that wait by design (Lock and Campaign on a held
 * name, Observe, Watch and LeaseKeepAlive streams) get a short deadline, whose expiry is their normal end.
 * Counts: {@code etcd.sent/Service.Method}, {@code etcd.answers/Service.Method.CODE}.
 */
public final class EtcdDoor {

    /** Every method, from the generated stubs' service descriptors. */
    public static final List<MethodDescriptor<?, ?>> METHODS = methods(KVGrpc.getServiceDescriptor(),
            WatchGrpc.getServiceDescriptor(), LeaseGrpc.getServiceDescriptor(), ClusterGrpc.getServiceDescriptor(),
            MaintenanceGrpc.getServiceDescriptor(), AuthGrpc.getServiceDescriptor(), LockGrpc.getServiceDescriptor(),
            ElectionGrpc.getServiceDescriptor());
    /** Methods that may wait for something that never comes (a held lock, the next event): a deadline ends them. */
    private static final Set<String> WAITING = Set.of("v3lockpb.Lock/Lock", "v3electionpb.Election/Campaign",
            "v3electionpb.Election/Observe", "etcdserverpb.Watch/Watch", "etcdserverpb.Lease/LeaseKeepAlive");
    private static final long WAIT_MS = 1_500;
    /** ElectionService's errors, etcd's strings, which etcd sends as UNKNOWN. */
    private static final Set<String> ELECTION_ERRORS = Set.of("election: not leader", "election: no leader",
            "\"leader\" field must be provided");

    private final WellFormedRequests gen;
    private final DoorGuard guard;
    private final DoorGuard.Caller caller;
    private final Tally tally;
    private final long deadlineMs;

    public EtcdDoor(WellFormedRequests gen, DoorGuard guard, DoorGuard.Caller caller, Tally tally, long deadlineMs) {
        this.gen = gen;
        this.guard = guard;
        this.caller = caller;
        this.tally = tally;
        this.deadlineMs = deadlineMs;
    }

    private static List<MethodDescriptor<?, ?>> methods(ServiceDescriptor... services) {
        List<MethodDescriptor<?, ?>> all = new ArrayList<>();
        for (ServiceDescriptor s : services) {
            all.addAll(s.getMethods());
        }
        return List.copyOf(all);
    }

    /** One generated call of a random method on {@code channel}. */
    public void call(Channel channel) {
        MethodDescriptor<Message, Message> m;
        Message first;
        do {   // a method whose every request the guard refuses (AuthEnable with auth off): another method
            @SuppressWarnings("unchecked")
            MethodDescriptor<Message, Message> drawn = (MethodDescriptor<Message, Message>)
                    METHODS.get(gen.random().nextInt(METHODS.size()));
            m = drawn;
            first = request(m);
        } while (first == null);
        String name = m.getFullMethodName().replace("etcdserverpb.", "");
        tally.add("etcd.sent/" + name);
        Status.Code code;
        String description = null;
        try {
            switch (m.getType()) {
                case UNARY -> ClientCalls.blockingUnaryCall(channel, m, options(m), first);
                case SERVER_STREAMING -> drain(ClientCalls.blockingServerStreamingCall(channel, m, options(m), first));
                default -> bidi(channel, m, first);
            }
            code = Status.Code.OK;
        } catch (StatusRuntimeException e) {
            code = e.getStatus().getCode();
            description = e.getStatus().getDescription();
        }
        tally.add("etcd.answers/" + name + "." + code);
        boolean waits = WAITING.contains(m.getFullMethodName());
        // etcd's own election server answers its recipe's errors as UNKNOWN, and clients match the text.
        boolean electionError = code == Status.Code.UNKNOWN && m.getFullMethodName().startsWith("v3electionpb.")
                && ELECTION_ERRORS.contains(description);
        if (code == Status.Code.UNKNOWN && !electionError|| code == Status.Code.INTERNAL || code == Status.Code.DATA_LOSS
                || description != null && description.contains("internal error")
                || code == Status.Code.DEADLINE_EXCEEDED && !waits) {
            tally.problem("etcd door: " + name + " ended " + code + ": " + description);
        }
    }

    private CallOptions options(MethodDescriptor<?, ?> m) {
        long ms = WAITING.contains(m.getFullMethodName()) ? WAIT_MS : deadlineMs;
        return CallOptions.DEFAULT.withDeadlineAfter(ms, TimeUnit.MILLISECONDS);
    }

    /** A request for {@code m} the guard admits, or null if it refused 50 in a row. */
    private Message request(MethodDescriptor<Message, Message> m) {
        Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller<?>) m.getRequestMarshaller())
                .getMessagePrototype();
        for (int attempt = 0; ; attempt++) {
            Message.Builder b = gen.next(prototype).toBuilder();
            if (guard.admit(b, caller, gen.random())) {
                return b.build();
            }
            if (attempt >= 50) {
                return null;
            }
        }
    }

    private static void drain(Iterator<?> responses) {
        while (responses.hasNext()) {
            responses.next();
        }
    }

    /** A few requests on one stream, then a half-close; the stream ends by the server or by the deadline. */
    private void bidi(Channel channel, MethodDescriptor<Message, Message> m, Message first) {
        ClientCall<Message, Message> call = channel.newCall(m, options(m));
        CountDownLatch done = new CountDownLatch(1);
        Status[] end = new Status[1];
        StreamObserver<Message> requests = ClientCalls.asyncBidiStreamingCall(call, new StreamObserver<>() {
            @Override
            public void onNext(Message value) {
            }

            @Override
            public void onError(Throwable t) {
                end[0] = Status.fromThrowable(t);
                done.countDown();
            }

            @Override
            public void onCompleted() {
                end[0] = Status.OK;
                done.countDown();
            }
        });
        requests.onNext(first);
        for (int i = gen.random().nextInt(4); i > 0; i--) {
            Message next = request(m);
            if (next != null) {
                requests.onNext(next);
            }
        }
        requests.onCompleted();
        try {
            if (!done.await(WAIT_MS + 5_000, TimeUnit.MILLISECONDS)) {
                throw Status.DEADLINE_EXCEEDED.withDescription("the stream outlived its deadline").asRuntimeException();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.asRuntimeException();
        }
        if (!end[0].isOk()) {
            throw end[0].asRuntimeException();
        }
    }
}
