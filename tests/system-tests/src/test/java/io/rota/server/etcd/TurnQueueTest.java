package io.rota.server.etcd;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.LeaseGrantRequest;
import io.rota.etcd.api.LeaseGrpc;
import io.rota.etcd.api.LeaseRevokeRequest;
import io.rota.etcd.api.LockGrpc;
import io.rota.etcd.api.LockRequest;
import io.rota.etcd.api.LockResponse;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.UnlockRequest;
import io.rota.server.RotaServer;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The queue contract against the etcd door's {@link Turn}, through v3lock's Lock and Unlock. */
@Tag("cluster")
class TurnQueueTest extends QueueContractTest {

    @TempDir
    static Path dir;
    private static RotaServer server;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() {
        server = EtcdApiTest.singleMember(dir, "turn-queue-test");
        channel = NettyChannelBuilder.forAddress(server.etcdAddress()).usePlaintext().build();
        Await.until(Duration.ofSeconds(10), () -> server.view().isLeader(), "the single member to lead");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    Queue queue(String name) {
        ByteString lockName = ByteString.copyFromUtf8(name);
        ByteString prefix = lockName.concat(ByteString.copyFromUtf8("/"));
        return new Queue() {
            @Override
            public Place enter() {
                long lease = LeaseGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build()).getID();
                ListenableFuture<LockResponse> call = LockGrpc.newFutureStub(channel)
                        .withDeadlineAfter(60, TimeUnit.SECONDS)
                        .lock(LockRequest.newBuilder().setName(lockName).setLease(lease).build());
                return new TurnPlace(lease, call);
            }

            @Override
            public int size() {
                return (int) KVGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .range(RangeRequest.newBuilder().setKey(prefix).setRangeEnd(Turn.prefixEnd(prefix)).build())
                        .getCount();
            }
        };
    }

    /** A Lock call on its own lease: the turn is the call's answer; giving up cancels the call. */
    private static final class TurnPlace implements Place {
        private final long lease;
        private final ListenableFuture<LockResponse> call;
        private final CompletableFuture<Void> turn = new CompletableFuture<>();

        TurnPlace(long lease, ListenableFuture<LockResponse> call) {
            this.lease = lease;
            this.call = call;
            call.addListener(() -> {
                try {
                    call.get();
                    turn.complete(null);
                } catch (Exception e) {
                    turn.completeExceptionally(e);
                }
            }, MoreExecutors.directExecutor());
        }

        @Override
        public CompletableFuture<Void> turn() {
            return turn;
        }

        @Override
        public void release() throws Exception {
            LockGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .unlock(UnlockRequest.newBuilder().setKey(call.get().getKey()).build());
        }

        @Override
        public void giveUp() {
            call.cancel(true);
        }

        @Override
        public void expire() {
            LeaseGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .leaseRevoke(LeaseRevokeRequest.newBuilder().setID(lease).build());
        }

        @Override
        public long wakeups() {
            return -1;   // Turn does not count its wake-ups
        }

        @Override
        public void close() {
            call.cancel(true);
            try {
                expire();
            } catch (RuntimeException alreadyGone) {
                // revoked by the test already
            }
        }
    }
}
