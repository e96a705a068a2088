package io.rota.server;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The quota and auto-compaction flags as etcd spells them; every refusal names its flag. */
class MaintenanceConfigTest {

    @Test
    void zeroQuotaMeansTheDefaultAndUnsetModeMeansNoAutoCompaction() {
        MaintenanceConfig c = MaintenanceConfig.parse(0, "", "");
        assertEquals(MaintenanceConfig.DEFAULT_QUOTA_BACKEND_BYTES, c.quotaBackendBytes());
        assertEquals(MaintenanceConfig.AutoCompactionMode.NONE, c.autoCompactionMode());
        assertEquals(c, c.toBuilder().build());
    }

    @Test
    void retentionIsADurationForPeriodicAndARevisionCountForRevision() {
        assertEquals(Duration.ofMinutes(30), MaintenanceConfig.parse(0, "periodic", "30m").retentionPeriod());
        assertEquals(Duration.ofHours(2), MaintenanceConfig.parse(0, "periodic", "2").retentionPeriod(),
                "a bare number is hours, as etcd");
        assertEquals(Duration.ofSeconds(90), MaintenanceConfig.parse(0, "PERIODIC", "90s").retentionPeriod());
        assertEquals(MaintenanceConfig.DEFAULT_RETENTION_PERIOD, MaintenanceConfig.parse(0, "periodic", "").retentionPeriod());
        assertEquals(5000, MaintenanceConfig.parse(0, "revision", "5000").retentionRevisions());
    }

    @Test
    void badValuesAreRefusedNamingTheFlag() {
        assertFlag("--quota-backend-bytes", () -> MaintenanceConfig.parse(-1, "", ""));
        assertFlag("--quota-backend-bytes", () -> MaintenanceConfig.parse(MaintenanceConfig.MAX_QUOTA_BACKEND_BYTES + 1, "", ""));
        assertFlag("--auto-compaction-mode", () -> MaintenanceConfig.parse(0, "hourly", ""));
        assertFlag("--auto-compaction-retention", () -> MaintenanceConfig.parse(0, "periodic", "1d"));
        assertFlag("--auto-compaction-retention", () -> MaintenanceConfig.parse(0, "revision", "1h"));
        assertFlag("--auto-compaction-retention", () -> MaintenanceConfig.parse(0, "revision", "0"));
        assertFlag("--auto-compaction-retention", () -> MaintenanceConfig.parse(0, "", "5"));
    }

    private static void assertFlag(String flag, Runnable parse) {
        FlagException e = assertThrows(FlagException.class, parse::run);
        assertEquals(flag, e.flag());
        assertTrue(e.getMessage().contains(flag), e.getMessage());
    }
}
