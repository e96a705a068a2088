package io.rota.server.kv;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Refused entries cannot flood the log: LogLimiter's budget, by log time (design.md HS12). */
class RefusalLogTest {

    @Test
    void atMostPerSecondOfLogTimeLinesPassAndTheNextOneCountsTheSuppressed() {
        Logger logger = (Logger) LoggerFactory.getLogger("RefusalLogTest");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            RefusalLog refusals = new RefusalLog(logger, 3);
            // A burst within one second of log time: only the budget passes, whatever the burst's length.
            for (int i = 0; i < 10_000; i++) {
                refusals.info(5_000 + i % 1_000, "entry refused {}", i);
            }
            assertEquals(List.of("entry refused 0", "entry refused 1", "entry refused 2"), messages(logged));

            // A second of log time later a line passes again and reports what was dropped.
            refusals.info(6_000, "entry refused {}", "later");
            assertEquals("entry refused later (9997 similar lines suppressed)", messages(logged).get(3));
            // The budget is per second: the window began at 6,000.
            refusals.info(6_999, "entry refused {}", "a");
            refusals.info(6_999, "entry refused {}", "b");
            refusals.info(6_999, "entry refused {}", "c");
            assertEquals(List.of("entry refused a", "entry refused b"), messages(logged).subList(4, 6));
            // A restored snapshot may start log time earlier: a step back opens a new window.
            refusals.info(1_000, "entry refused {}", "restored");
            assertEquals("entry refused restored (1 similar lines suppressed)", messages(logged).get(6));
        } finally {
            logger.detachAppender(logged);
        }
    }

    @Test
    void aBudgetBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RefusalLog(LoggerFactory.getLogger("x"), 0));
    }

    private static List<String> messages(ListAppender<ILoggingEvent> logged) {
        return logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
}
