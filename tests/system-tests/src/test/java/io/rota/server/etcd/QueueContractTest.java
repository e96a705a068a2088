package io.rota.server.etcd;

import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The queue semantics that the etcd door's lock ({@link Turn}, behind v3lock's Lock and v3election's Campaign)
 * and the recipes' Contender (behind Lock and Election) both implement: contenders' keys under a prefix, each on
 * a lease, wait their turn behind every key with a lower create revision. One contract, run against each
 * ({@link TurnQueueTest}, {@link ContenderQueueTest}), on one member:
 * <ul>
 *   <li>FIFO by create revision: the turn passes in the order the keys were created;</li>
 *   <li>a waiter is woken only when the key just before it goes (no herd: where the implementation counts
 *       its wake-ups, a waiter behind another waiter does not wake when the holder leaves);</li>
 *   <li>the holder's deletion, or the end of its lease, hands the turn over;</li>
 *   <li>a waiter that gives up leaves the queue (its key is deleted) and the queue closes the gap;</li>
 *   <li>no two holders: at every hand-over exactly one contender has the turn.</li>
 * </ul>
 */
@Tag("cluster")
abstract class QueueContractTest {

    static final Duration WAIT = Duration.ofSeconds(15);

    /** One queue, as the implementation under test serves it. */
    interface Queue {
        /** Joins as a new contender with its own lease; returns at once (the turn comes later, or never). */
        Place enter() throws Exception;

        /** How many contenders' keys the queue holds now. */
        int size();
    }

    /** One contender's place. */
    interface Place extends AutoCloseable {
        /** Completes when the turn has come; fails if the place was given up or lost. */
        CompletableFuture<Void> turn();

        /** The holder leaves: its key is deleted. */
        void release() throws Exception;

        /** A waiter gives up (its caller goes away): it must leave the queue. */
        void giveUp();

        /** The holder's lease ends (revoked: the end an expiry brings, without waiting a TTL). */
        void expire() throws Exception;

        /** How many times it woke up because a key before it went, or -1 where the implementation does not count. */
        long wakeups();

        /** Releases what the place holds on the test's side (clients, calls); its key may stay until its lease ends. */
        @Override
        void close();
    }

    /** A new, empty queue named {@code name}. */
    abstract Queue queue(String name);

    private final List<Place> places = new ArrayList<>();
    private Queue queue;

    private Queue queue(TestInfo test) {
        queue = queue(test.getTestMethod().orElseThrow().getName().toLowerCase(java.util.Locale.ROOT)
                + "-" + getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT));
        return queue;
    }

    @AfterEach
    void closePlaces() {
        places.forEach(Place::close);
        places.clear();
    }

    /** Enters and waits until its key is in the queue, so places enter in a known create order. */
    private Place enter() throws Exception {
        int before = queue.size();
        Place p = queue.enter();
        places.add(p);
        Await.until(WAIT, () -> queue.size() == before + 1, "the new contender's key to be queued");
        return p;
    }

    private static void awaitTurn(Place p, String what) throws Exception {
        p.turn().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(p.turn().isDone() && !p.turn().isCompletedExceptionally(), what);
    }

    @Test
    @DisplayName("FIFO by create revision: the turn passes in the order the keys were created")
    void fifoByCreateRevision(TestInfo test) throws Exception {
        queue(test);
        Place a = enter();
        awaitTurn(a, "the first contender has the turn at once");
        Place b = enter();
        Place c = enter();
        assertFalse(b.turn().isDone() || c.turn().isDone(), "nobody else has the turn while the first holds it");
        a.release();
        awaitTurn(b, "the second gets the turn when the first leaves");
        assertFalse(c.turn().isDone(), "the third waits behind the second");
        b.release();
        awaitTurn(c, "the third gets the turn when the second leaves");
    }

    @Test
    @DisplayName("a waiter is woken only when the key just before it goes")
    void wokenOnlyByThePredecessor(TestInfo test) throws Exception {
        queue(test);
        Place a = enter();
        awaitTurn(a, "the first contender has the turn at once");
        Place b = enter();
        Place c = enter();
        a.release();
        awaitTurn(b, "the second gets the turn when the first leaves");
        assertFalse(c.turn().isDone(), "the third waits behind the second");
        if (c.wakeups() >= 0) {
            assertEquals(0, c.wakeups(), "the third did not wake when the first (not its predecessor) left");
        }
        b.release();
        awaitTurn(c, "the third gets the turn when the second leaves");
        if (c.wakeups() >= 0) {
            assertEquals(1, c.wakeups(), "the third woke once: when its predecessor left");
        }
    }

    @Test
    @DisplayName("the end of the holder's lease hands the turn over")
    void theHoldersLeaseEndingHandsOver(TestInfo test) throws Exception {
        queue(test);
        Place a = enter();
        awaitTurn(a, "the first contender has the turn at once");
        Place b = enter();
        a.expire();
        awaitTurn(b, "the second gets the turn when the holder's lease ends");
        assertEquals(1, queue.size(), "the holder's key went with its lease");
    }

    @Test
    @DisplayName("a waiter that gives up leaves the queue, and the one behind it moves up")
    void aWaiterThatGivesUpLeavesTheQueue(TestInfo test) throws Exception {
        queue(test);
        Place a = enter();
        awaitTurn(a, "the first contender has the turn at once");
        Place b = enter();
        Place c = enter();
        b.giveUp();
        Await.until(WAIT, () -> queue.size() == 2, "the waiter that gave up to leave the queue");
        assertFalse(c.turn().isDone(), "the holder still holds: the third waits");
        a.release();
        awaitTurn(c, "the third gets the turn after the holder, the second having left");
        assertTrue(b.turn().isCompletedExceptionally() || !b.turn().isDone(), "the waiter that gave up never got it");
    }

    @Test
    @DisplayName("no two holders: at every hand-over exactly one contender has the turn")
    void neverTwoHolders(TestInfo test) throws Exception {
        queue(test);
        List<Place> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(enter());
        }
        while (!waiting.isEmpty()) {
            Await.until(WAIT, () -> waiting.stream().anyMatch(p -> p.turn().isDone()), "someone to have the turn");
            List<Place> holders = waiting.stream().filter(p -> p.turn().isDone()).toList();
            assertEquals(1, holders.size(), "exactly one holder");
            Place holder = holders.get(0);
            assertEquals(waiting.get(0), holder, "the earliest created of those left");
            awaitTurn(holder, "the holder's turn completed normally");
            holder.release();
            waiting.remove(holder);
        }
    }
}
