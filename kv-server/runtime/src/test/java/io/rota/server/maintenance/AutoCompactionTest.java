package io.rota.server.maintenance;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The auto-compaction decision (etcd's --auto-compaction-mode), with made-up leader times and revisions. */
class AutoCompactionTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void revisionModeKeepsTheLatestRetentionRevisions() {
        AutoCompaction.Schedule s = new AutoCompaction.Schedule(null, 100);
        assertEquals(AutoCompaction.REVISION_CHECK_INTERVAL, s.interval());
        assertEquals(0, s.due(1, 0, 50), "fewer revisions than the retention: nothing to compact");
        assertEquals(400, s.due(1, 0, 500));
    }

    @Test
    void periodicModeCompactsAtTheRevisionSampledOneRetentionAgo() {
        AutoCompaction.Schedule s = new AutoCompaction.Schedule(Duration.ofSeconds(100), 0);
        assertEquals(Duration.ofSeconds(10), s.interval(), "a tenth of the retention");
        assertEquals(0, s.due(3, 0, 10));
        assertEquals(0, s.due(3, 50 * SECOND, 60), "nothing is one retention old yet");
        assertEquals(10, s.due(3, 100 * SECOND, 110), "the sample taken 100 s ago");
        assertEquals(60, s.due(3, 160 * SECOND, 170), "the newest sample at least 100 s old");
        assertEquals(0, s.due(3, 170 * SECOND, 180), "no newer sample is old enough yet");
    }

    @Test
    void aNewLeadershipStartsItsSamplesAfreshSoItNeverCompactsEarly() {
        AutoCompaction.Schedule s = new AutoCompaction.Schedule(Duration.ofSeconds(100), 0);
        s.due(3, 0, 10);
        assertEquals(0, s.due(4, 100 * SECOND, 110), "the samples of term 3 are not this leader's");
        assertEquals(110, s.due(4, 200 * SECOND, 210));
        s.reset();
        assertEquals(0, s.due(4, 300 * SECOND, 310), "not leading in between forgets the samples");
    }

    @Test
    void periodicChecksRunBetweenOneSecondAndOneHour() {
        assertEquals(Duration.ofSeconds(1), new AutoCompaction.Schedule(Duration.ofSeconds(2), 0).interval());
        assertEquals(Duration.ofHours(1), new AutoCompaction.Schedule(Duration.ofHours(48), 0).interval());
    }
}
