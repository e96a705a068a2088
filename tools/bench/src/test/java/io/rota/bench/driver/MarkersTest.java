package io.rota.bench.driver;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MarkersTest {

    @Test
    void aResultLineRoundTrips() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("workload", "write-64");
        f.put("ops", 90210);
        f.put("library", "jetcd-core 0.8.5");
        String line = Markers.format(Markers.RESULT, f);
        assertEquals("@result workload=write-64 ops=90210 library=jetcd-core_0.8.5", line);
        assertEquals(Markers.RESULT, Markers.kind(line));
        assertEquals(Map.of("workload", "write-64", "ops", "90210", "library", "jetcd-core_0.8.5"), Markers.fields(line));
    }

    @Test
    void aBareMarkerHasAKindAndNoFieldsAndLogLinesAreNotMarkers() {
        assertEquals(Markers.KILL_LEADER, Markers.kind("@kill-leader"));
        assertEquals(Map.of(), Markers.fields("@kill-leader"));
        assertNull(Markers.kind("SLF4J: no binding"));
    }

    @Test
    void aFieldWithoutEqualsIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> Markers.fields("@result workload=x broken"));
    }
}
