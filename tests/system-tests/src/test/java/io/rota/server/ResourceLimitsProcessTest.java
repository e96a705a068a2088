package io.rota.server;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.rota.client.RotaClient;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.WatchCreateRequest;
import io.rota.etcd.api.WatchGrpc;
import io.rota.etcd.api.WatchRequest;
import io.rota.etcd.api.WatchResponse;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.rota.server.Requests.get;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 33, item 4, against a real member process: what one hostile client may cost the client port and the
 * etcd port (the flags of docs/security.md, "Resource limits"). Each test starts its own one-member cluster
 * with the limit under test made small.
 */
@Tag("process")
class ResourceLimitsProcessTest {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void aClientThatPipelinesRequestsAndNeverReadsIsPausedThenClosedWhileOthersWork() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(dir, 1, "--client-unwritable-timeout", "3s")) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", cluster.clientPort(0));
            try (FrameClient good = new FrameClient(address)) {
                ok(good.call(Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(Requests.bytes("big"))
                        .setValue(ByteString.copyFrom(new byte[16 << 10])))));
                byte[] range = get("big").setCallId(1).build().toByteArray();
                long started = System.nanoTime();
                try (Socket hostile = unreadSocket(address)) {
                    DataOutputStream out = new DataOutputStream(hostile.getOutputStream());
                    // 20,000 answers of 16 KiB would be 320 MB buffered in the member without back-pressure.
                    IOException closed = null;
                    for (int i = 0; i < 20_000 && closed == null; i++) {
                        try {
                            out.writeInt(range.length);
                            out.write(range);
                        } catch (IOException e) {
                            closed = e;
                        }
                        if (i % 1000 == 0) {
                            ok(good.call(get("big")));   // the member serves others meanwhile
                        }
                    }
                    long deadline = System.nanoTime() + DEADLINE.toNanos();
                    while (closed == null && System.nanoTime() < deadline) {
                        try {
                            out.writeInt(range.length);
                            out.write(range);
                            out.flush();
                            Thread.onSpinWait();
                        } catch (IOException e) {
                            closed = e;
                        }
                    }
                    assertTrue(closed != null, "the member should close a connection that does not read its answers");
                }
                assertTrue(System.nanoTime() - started < DEADLINE.toNanos() + TimeUnit.SECONDS.toNanos(30));
                ok(good.call(get("big")));
                assertTrue(cluster.logTail(0, 200).contains("--client-unwritable-timeout"),
                        "the close is logged naming the flag");
            }
        }
    }

    @Test
    void answersPastMaxClientPendingBytesCloseTheConnection() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(dir, 1, "--max-client-pending-bytes", "2097152",
                "--client-unwritable-timeout", "10m")) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", cluster.clientPort(0));
            try (FrameClient good = new FrameClient(address)) {
                ok(good.call(Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(Requests.bytes("mib"))
                        .setValue(ByteString.copyFrom(new byte[1 << 20])))));
                try (Socket hostile = unreadSocket(address)) {
                    DataOutputStream out = new DataOutputStream(hostile.getOutputStream());
                    byte[] range = get("mib").setCallId(1).build().toByteArray();
                    for (int i = 0; i < 64; i++) {   // 64 MiB of answers, read by the member in one burst
                        out.writeInt(range.length);
                        out.write(range);
                    }
                    out.flush();
                    // Reading now would drain what the bound measures: wait for the member to say it closed.
                    Await.until(DEADLINE, () -> cluster.logTail(0, 200).contains("--max-client-pending-bytes"),
                            "the member closes the connection over the bound, naming the flag");
                    assertClosedByPeer(hostile, "64 answers of 1 MiB over a 2 MiB bound");
                }
                ok(good.call(get("mib")));
            }
        }
    }

    @Test
    void pastMaxClientConnectionsANewConnectionIsClosedAndTheOpenOnesWork() throws Exception {
        int etcdPort = Ports.freePort();
        try (ProcessCluster cluster = ProcessCluster.start(dir, 1, "--max-client-connections", "3",
                "--listen-etcd", "127.0.0.1:" + etcdPort)) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", cluster.clientPort(0));
            List<FrameClient> open = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    open.add(new FrameClient(address));
                    ok(open.get(i).call(put("k" + i, "v")));
                }
                try (Socket fourth = new Socket()) {
                    fourth.connect(address);
                    assertClosedByPeer(fourth, "a fourth client connection");
                }
                for (FrameClient c : open) {
                    ok(c.call(get("k0")));
                }
                open.remove(0).close();
                Await.until(DEADLINE, () -> {
                    try (FrameClient again = new FrameClient(address)) {
                        return again.poll(again.send(get("k1")), Duration.ofSeconds(1)) != null;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                }, "a place freed by a close is taken again");
            } finally {
                open.forEach(FrameClient::close);
            }
            // The etcd port counts its own connections: three raw ones get gRPC's settings, the fourth is closed.
            InetSocketAddress etcd = new InetSocketAddress("127.0.0.1", etcdPort);
            List<Socket> raw = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    Socket s = new Socket();
                    s.connect(etcd);
                    s.setSoTimeout(10_000);
                    assertTrue(s.getInputStream().read() >= 0, "connection " + i + " gets the server's HTTP/2 settings");
                    raw.add(s);
                }
                try (Socket fourth = new Socket()) {
                    fourth.connect(etcd);
                    assertClosedByPeer(fourth, "a fourth etcd connection");
                }
            } finally {
                for (Socket s : raw) {
                    s.close();
                }
            }
            assertTrue(cluster.logTail(0, 200).contains("--max-client-connections"), "logged naming the flag");
        }
    }

    @Test
    void anIdleConnectionIsClosedAWatchingOneIsKeptAndTheSdkCarriesOn() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(dir, 1, "--client-idle-timeout", "2s");
             RotaClient sdk = RotaClient.builder().endpoints(cluster.endpoints())
                     .callTimeout(Duration.ofSeconds(10)).build()) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", cluster.clientPort(0));
            sdk.kv().put("sdk", "1");
            try (FrameClient watching = new FrameClient(address);
                 Socket idle = new Socket()) {
                ok(watching.call(put("w/a", "1")));
                long watch = watching.send(Requests.watchPrefix("w/", 0));
                assertTrue(watching.next(watch).getWatchResponse().getCreated());
                idle.connect(address);
                DataOutputStream out = new DataOutputStream(idle.getOutputStream());
                byte[] request = get("w/a").setCallId(1).build().toByteArray();
                out.writeInt(request.length);
                out.write(request);
                out.flush();

                assertClosedByPeer(idle, "a connection idle past --client-idle-timeout 2s");

                ok(watching.call(put("w/b", "2")));
                Frame event = watching.next(watch);
                assertEquals("w/b", event.getWatchResponse().getEvents(0).getKv().getKey().toStringUtf8(),
                        "the watching connection (idle as long as the other) is kept");
                // The SDK's connection, idle as long, is closed too: only the watching one stays.
                Await.until(DEADLINE, () -> clientConnections(cluster) == 1, "only the watching connection open");
            }
            // The SDK's next calls dial again without the application noticing.
            sdk.kv().put("sdk", "2");
            assertEquals("2", sdk.kv().get("sdk").first().orElseThrow().valueString());
        }
    }

    @Test
    void anEtcdConnectionOpeningMoreStreamsThanTheCapWaitsForAFreeOne() throws Exception {
        int etcdPort = Ports.freePort();
        try (ProcessCluster cluster = ProcessCluster.start(dir, 1, "--listen-etcd", "127.0.0.1:" + etcdPort,
                "--max-concurrent-streams", "2")) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", etcdPort).usePlaintext().build();
            try {
                KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(channel);
                kv.withDeadlineAfter(10, TimeUnit.SECONDS).range(RangeRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8("x")).build());
                List<StreamObserver<WatchRequest>> watches = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    StreamObserver<WatchRequest> w = WatchGrpc.newStub(channel).watch(new StreamObserver<>() {
                        @Override
                        public void onNext(WatchResponse value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
                    w.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                            .setKey(ByteString.copyFromUtf8("w" + i))).build());
                    watches.add(w);
                }
                // Both streams are open: a third (this unary call) is not served on this connection.
                StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> kv
                        .withDeadlineAfter(3, TimeUnit.SECONDS).range(RangeRequest.newBuilder()
                                .setKey(ByteString.copyFromUtf8("x")).build()));
                assertTrue(refused.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED
                        || refused.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED
                        || refused.getStatus().getCode() == Status.Code.UNAVAILABLE, refused.toString());
                watches.get(0).onCompleted();
                Await.until(DEADLINE, () -> {
                    try {
                        kv.withDeadlineAfter(2, TimeUnit.SECONDS).range(RangeRequest.newBuilder()
                                .setKey(ByteString.copyFromUtf8("x")).build());
                        return true;
                    } catch (StatusRuntimeException e) {
                        return false;
                    }
                }, "a closed stream frees a place");
                watches.get(1).onCompleted();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** The member's rota_client_connections gauge (its /metrics). */
    private static long clientConnections(ProcessCluster cluster) {
        for (String line : cluster.httpGet(0, "/metrics").body().split("\n")) {
            if (line.startsWith("rota_client_connections ")) {
                return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new AssertionError("no rota_client_connections in /metrics");
    }

    /** A socket with a 4 KiB receive window that this test never reads: the member's writes stop soon. */
    private static Socket unreadSocket(InetSocketAddress address) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(address);
        return s;
    }

    /** The member closes {@code socket} within the deadline: a read ends (EOF or reset), skipping any answers. */
    private static void assertClosedByPeer(Socket socket, String what) throws IOException {
        socket.setSoTimeout((int) DEADLINE.toMillis());
        InputStream in = socket.getInputStream();
        byte[] skip = new byte[64 << 10];
        try {
            while (in.read(skip) >= 0) {
                // answers written before the close
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError(what + ": still open after " + DEADLINE.toSeconds() + " s", e);
        } catch (IOException reset) {
            return;   // closed with unsent data: a reset
        }
    }
}
