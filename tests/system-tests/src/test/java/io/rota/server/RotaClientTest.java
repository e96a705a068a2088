package io.rota.server;

import io.rota.client.CompareOp;
import io.rota.client.DeleteResult;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TxnResult;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java SDK ({@code io.rota.client}) against three real in-JVM servers. */
@Tag("cluster")
class RotaClientTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));


    /** All members, in reverse id order (the SDK must not assume the list is in id order). */
    static String all() {
        return CLUSTER.get().endpoint(2) + "," + CLUSTER.get().endpoint(1) + "," + CLUSTER.get().endpoint(0);
    }

    @Test
    @DisplayName("put, get, prefix get, delete, prefix delete, with byte[] and String overloads and async forms")
    void putGetDeletePrefix() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            PutResult first = rota.kv().put("crud/a", "1");
            assertTrue(first.revision() > 0);
            assertTrue(first.prev().isEmpty());
            PutResult second = rota.kv().put("crud/a", "2");
            assertEquals("1", second.prevKv().valueString());
            assertTrue(second.revision() > first.revision());
            rota.kv().put("crud/b".getBytes(), new byte[] {1, 2, 3});
            rota.kv().putAsync("crud/c".getBytes(), "3".getBytes(), 0).get();
            rota.kv().put("crudx", "outside the prefix");

            KeyValue a = rota.kv().get("crud/a").first().orElseThrow();
            assertEquals("2", a.valueString());
            assertEquals(2, a.version());
            assertEquals(first.revision(), a.createRevision());
            assertEquals(second.revision(), a.modRevision());
            assertArrayEquals(new byte[] {1, 2, 3}, rota.kv().get("crud/b".getBytes()).first().orElseThrow().value());
            assertTrue(rota.kv().get("crud/missing").kvs().isEmpty());

            GetResult prefix = rota.kv().getPrefix("crud/");
            assertEquals(List.of("crud/a", "crud/b", "crud/c"), prefix.kvs().stream().map(KeyValue::keyString).toList());
            assertEquals(3, prefix.count());
            assertTrue(prefix.revision() >= second.revision());

            DeleteResult deleted = rota.kv().delete("crud/a");
            assertEquals(1, deleted.deleted());
            assertEquals("2", deleted.prevKvs().get(0).valueString());
            assertEquals(0, rota.kv().delete("crud/a").deleted());
            DeleteResult all = rota.kv().deletePrefixAsync("crud/".getBytes()).get();
            assertEquals(2, all.deleted());
            assertTrue(rota.kv().getPrefix("crud/").kvs().isEmpty());
            assertEquals(1, rota.kv().get("crudx").count());
        }
    }

    @Test
    @DisplayName("txn: create-if-absent succeeds once; the second sees the owner in its orElse branch")
    void txn() {
        try (RotaClient rota = RotaClient.connect(all())) {
            TxnResult won = rota.kv().txn().ifVersion("txn/owner", CompareOp.EQUAL, 0)
                    .then(Op.put("txn/owner", "app-1"), Op.get("txn/owner"))
                    .orElse(Op.get("txn/owner"))
                    .commit();
            assertTrue(won.succeeded());
            assertEquals(2, won.responses().size());
            assertInstanceOf(PutResult.class, won.responses().get(0));
            assertEquals("app-1", ((GetResult) won.responses().get(1)).first().orElseThrow().valueString());

            TxnResult lost = rota.kv().txn().ifVersion("txn/owner", CompareOp.EQUAL, 0)
                    .then(Op.put("txn/owner", "app-2"))
                    .orElse(Op.get("txn/owner"))
                    .commit();
            assertFalse(lost.succeeded());
            assertEquals("app-1", ((GetResult) lost.responses().get(0)).first().orElseThrow().valueString());

            TxnResult byValue = rota.kv().txn().ifValue("txn/owner", CompareOp.EQUAL, "app-1")
                    .then(Op.delete("txn/owner"))
                    .commit();
            assertTrue(byValue.succeeded());
            assertTrue(rota.kv().get("txn/owner").kvs().isEmpty());

            // A nested txn: its compare sees the state before the outer put, its result is a TxnResult.
            TxnResult outer = rota.kv().txn()
                    .then(Op.put("txn/first", "1"), Op.txn(rota.kv().txn()
                            .ifVersion("txn/first", CompareOp.EQUAL, 0)
                            .then(Op.put("txn/second", "2"), Op.get("txn/first"))))
                    .commit();
            TxnResult inner = (TxnResult) outer.responses().get(1);
            assertTrue(inner.succeeded());
            assertEquals("1", ((GetResult) inner.responses().get(1)).first().orElseThrow().valueString());
            assertEquals(outer.revision(), inner.revision());
            assertEquals(outer.revision(), rota.kv().get("txn/second").first().orElseThrow().modRevision());
        }
    }

    @Test
    @DisplayName("a client that knows only a follower writes and reads through it")
    void writeThroughAFollower() {
        int follower = CLUSTER.get().follower();
        try (RotaClient rota = RotaClient.builder().endpoints(CLUSTER.get().endpoint(follower))
                .callTimeout(Duration.ofSeconds(15)).build()) {
            PutResult put = rota.kv().put("follower/k", "v");
            assertTrue(put.revision() > 0);
            assertEquals("v", rota.kv().get("follower/k").first().orElseThrow().valueString());
        }
        try (RotaClient rota = RotaClient.connect(CLUSTER.get().endpoint(CLUSTER.get().awaitLeader()))) {
            assertEquals("v", rota.kv().get("follower/k").first().orElseThrow().valueString());
        }
    }

    @Test
    @DisplayName("an empty key is a typed INVALID_ARGUMENT with the server's message, not retried")
    void emptyKeyIsInvalidArgument() {
        try (RotaClient rota = RotaClient.connect(all())) {
            RotaException put = assertThrows(RotaException.class, () -> rota.kv().put("", "x"));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, put.code());
            assertFalse(put.getMessage().isBlank());
            RotaException get = assertThrows(RotaException.class, () -> rota.kv().get(""));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, get.code());
            assertTrue(rota.kv().put("after/invalid", "ok").revision() > 0, "the client stays usable");
        }
    }

    @Test
    @DisplayName("a write whose answer is lost with its connection is retried under the same sequence and applied once")
    void aWriteRetriedAfterALostAnswerIsAppliedOnce() throws Exception {
        int leader = CLUSTER.get().awaitLeader();
        try (DroppingProxy proxy = new DroppingProxy(CLUSTER.get().client(leader));
             RotaClient rota = RotaClient.builder().endpoints("127.0.0.1:" + proxy.port())
                     .callTimeout(Duration.ofSeconds(15)).build()) {
            rota.kv().put("once/warmup", "w");          // session registered, connection open
            proxy.dropNextAnswer.set(true);
            PutResult put = rota.kv().put("once/k", "v");
            assertEquals(1, proxy.dropped.get(), "the first answer was lost with its connection");
            KeyValue kv = rota.kv().get("once/k").first().orElseThrow();
            assertEquals(1, kv.version(), "applied once, not once per attempt");
            assertEquals(put.revision(), kv.modRevision(), "the retry got the first attempt's answer");
            assertTrue(put.prev().isEmpty());
        }
    }

    /**
     * A TCP proxy to one member. Armed, it relays the client's request but, instead of relaying the next
     * answer, closes both sides: the write is applied, the client never hears it.
     */
    static final class DroppingProxy implements AutoCloseable {
        final AtomicBoolean dropNextAnswer = new AtomicBoolean();
        final AtomicInteger dropped = new AtomicInteger();
        private final ServerSocket server;
        private final InetSocketAddress target;

        DroppingProxy(InetSocketAddress target) throws IOException {
            this.target = target;
            server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::accept, "proxy-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept() {
            try {
                while (true) {
                    Socket client = server.accept();
                    Socket upstream = new Socket(target.getAddress(), target.getPort());
                    pump(client, upstream, false);
                    pump(upstream, client, true);
                }
            } catch (IOException closed) {
                // the proxy is closed
            }
        }

        private void pump(Socket from, Socket to, boolean answers) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[8192];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        if (answers && dropNextAnswer.compareAndSet(true, false)) {
                            dropped.incrementAndGet();
                            break;
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // one side closed
                } finally {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }, "proxy-pump");
            t.setDaemon(true);
            t.start();
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
