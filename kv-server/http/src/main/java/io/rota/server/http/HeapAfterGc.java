package io.rota.server.http;

import com.sun.management.GarbageCollectorMXBean;
import com.sun.management.GcInfo;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Heap in use right after the most recent garbage collection: what the member really retains. "Heap
 * used" alone saw-tooths between collections, so it cannot tell a leak from garbage not yet collected.
 */
final class HeapAfterGc {

    private static final Set<String> HEAP_POOLS = ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toSet());

    private HeapAfterGc() {
    }

    /** Bytes; -1 before the first collection (or on a JVM without {@code com.sun.management}). */
    static long bytes() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .filter(GarbageCollectorMXBean.class::isInstance)
                .map(b -> ((GarbageCollectorMXBean) b).getLastGcInfo())
                .filter(Objects::nonNull)
                .max(Comparator.comparingLong(GcInfo::getEndTime))
                .map(HeapAfterGc::heapUsed)
                .orElse(-1L);
    }

    private static long heapUsed(GcInfo gc) {
        long used = 0;
        for (Map.Entry<String, MemoryUsage> pool : gc.getMemoryUsageAfterGc().entrySet()) {
            if (HEAP_POOLS.contains(pool.getKey())) {
                used += pool.getValue().getUsed();
            }
        }
        return used;
    }
}
