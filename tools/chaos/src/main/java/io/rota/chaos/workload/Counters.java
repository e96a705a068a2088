package io.rota.chaos.workload;

import java.util.concurrent.atomic.LongAdder;

/** Live counts of completed client operations, for the progress line. Thread-safe. */
public final class Counters {

    private final LongAdder ok = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder info = new LongAdder();

    /** Counts an acknowledged operation. */
    public void ok() {
        ok.increment();
    }

    /** Counts an operation that certainly did not take effect. */
    public void failed() {
        failed.increment();
    }

    /** Counts an indeterminate operation. */
    public void info() {
        info.increment();
    }

    /** For the progress line: {@code ok=.. failed=.. info=..}. */
    @Override
    public String toString() {
        return "ok=" + ok.sum() + " failed=" + failed.sum() + " info=" + info.sum();
    }
}
