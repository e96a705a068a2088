package io.rota.raft.node;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The driver's inbox: bounded, FIFO, and no producer's wake-up of a waiting driver is ever lost. */
class InboxTest {

    @Test
    void holdsAtMostItsCapacityAndTakesMoreOnceDrained() {
        Inbox<Integer> inbox = new Inbox<>(3);
        assertTrue(inbox.offer(1));
        assertTrue(inbox.offer(2));
        assertTrue(inbox.offer(3));
        assertFalse(inbox.offer(4), "a full inbox refuses rather than blocking a Netty thread");
        assertEquals(3, inbox.size());
        assertEquals(1, inbox.poll());
        assertTrue(inbox.offer(4));
        List<Integer> batch = new ArrayList<>();
        assertEquals(2, inbox.drainTo(batch, 2));
        assertEquals(List.of(2, 3), batch);
        assertEquals(4, inbox.poll());
        assertTrue(inbox.isEmpty());
        assertNull(inbox.poll());
    }

    @Test
    void aTimedPollOfAnEmptyInboxReturnsNullAndAnInterruptEndsIt() throws InterruptedException {
        Inbox<Integer> inbox = new Inbox<>(8);
        assertNull(inbox.poll(1, TimeUnit.MILLISECONDS));
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> inbox.poll(10, TimeUnit.SECONDS));
        assertFalse(Thread.interrupted(), "the interrupt is consumed by the exception, as a blocking queue's is");
    }

    /**
     * The race the design has to win: a producer appends just as the consumer decides to park. A lost
     * wake-up leaves the consumer asleep for the whole poll timeout with an item queued, and the poll then
     * returns null instead of the item: 20,000 hand-offs in a row, each a fresh chance to lose one.
     */
    @Test
    void noWakeUpIsLostBetweenAProducerAndAParkingConsumer() throws Exception {
        Inbox<Integer> inbox = new Inbox<>(4);
        Inbox<Integer> acks = new Inbox<>(4);
        int rounds = 20_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread producer = new Thread(() -> {
            try {
                for (int k = 0; k < rounds; k++) {
                    assertTrue(inbox.offer(k));
                    assertEquals(k, acks.poll(30, TimeUnit.SECONDS), "the consumer's answer to " + k);
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "inbox-test-producer");
        producer.start();
        for (int k = 0; k < rounds; k++) {
            Integer got = inbox.poll(30, TimeUnit.SECONDS);
            assertEquals(k, got, "item " + k + " arrived in order and its wake-up was not lost");
            assertTrue(acks.offer(k));
        }
        producer.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(producer.isAlive());
        assertNull(failure.get());
    }
}
