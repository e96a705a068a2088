package io.rota.server.etcd;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.server.RotaServer;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The queue contract against the recipes' Contender, through the Lock recipe (Contender is the recipes' package's
 * own; Lock is its public face): each place is a client of its own, so its own session lease.
 */
@Tag("cluster")
class ContenderQueueTest extends QueueContractTest {

    @TempDir
    static Path dir;
    private static RotaServer server;

    @BeforeAll
    static void start() {
        server = EtcdApiTest.singleMember(dir, "contender-queue-test");
        Await.until(Duration.ofSeconds(10), () -> server.view().isLeader(), "the single member to lead");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static RotaClient client() {
        return RotaClient.builder().endpoints("127.0.0.1:" + server.clientAddress().getPort()).build();
    }

    @Override
    Queue queue(String name) {
        LockOptions options = LockOptions.defaults();
        String prefix = options.prefix() + "/" + name + "/";
        return new Queue() {
            @Override
            public Place enter() {
                RotaClient client = client();
                return new ContenderPlace(client, Lock.of(client, name, options));
            }

            @Override
            public int size() {
                try (RotaClient reader = client()) {
                    return reader.kv().getPrefix(prefix).kvs().size();
                }
            }
        };
    }

    /** Lock.acquire on a thread of its own: the turn is its return; giving up interrupts it. */
    private static final class ContenderPlace implements Place {
        private final Lock lock;
        private final RotaClient client;
        private final CompletableFuture<LockHandle> held = new CompletableFuture<>();
        private final CompletableFuture<Void> turn = held.thenApply(h -> null);
        private final Thread waiter;

        ContenderPlace(RotaClient client, Lock lock) {
            this.lock = lock;
            this.client = client;
            this.waiter = new Thread(() -> {
                try {
                    held.complete(lock.acquire(Duration.ofSeconds(60)));
                } catch (Throwable e) {
                    held.completeExceptionally(e);
                }
            }, "contender-" + lock.name());
            waiter.setDaemon(true);
            waiter.start();
        }

        @Override
        public CompletableFuture<Void> turn() {
            return turn;
        }

        @Override
        public void release() {
            held.join().release();
        }

        @Override
        public void giveUp() {
            waiter.interrupt();
        }

        @Override
        public void expire() {
            client.leases().revoke(held.join().leaseId());
        }

        @Override
        public long wakeups() {
            return lock.wakeups();
        }

        @Override
        public void close() {
            waiter.interrupt();
            client.close();
        }
    }
}
