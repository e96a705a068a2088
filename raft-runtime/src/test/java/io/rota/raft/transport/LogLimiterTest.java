package io.rota.raft.transport;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A sender that misbehaves in a loop cannot flood the log: a fixed number of lines per second pass. */
class LogLimiterTest {

    @Test
    void atMostPerSecondLinesPassAndTheNextOneCountsTheSuppressed() {
        Logger logger = (Logger) LoggerFactory.getLogger("LogLimiterTest");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            LogLimiter limiter = new LogLimiter(logger, 3);
            // A burst far faster than one second: only the budget passes, whatever the burst's length.
            for (int i = 0; i < 10_000; i++) {
                limiter.warn("bad frame {}", i);
            }
            List<String> lines = logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
            assertEquals(List.of("bad frame 0", "bad frame 1", "bad frame 2"), lines);

            // In the next second a line passes again and reports what was dropped.
            Await.until(Duration.ofSeconds(10), () -> {
                limiter.warn("bad frame {}", "later");
                return logged.list.size() > 3;
            }, "a line passes in the next second");
            String next = logged.list.get(3).getFormattedMessage();
            assertTrue(next.matches("bad frame later \\(\\d+ similar lines suppressed\\)"), next);
        } finally {
            logger.detachAppender(logged);
        }
    }

    @Test
    void aBudgetBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new LogLimiter(LoggerFactory.getLogger("x"), 0));
    }
}
