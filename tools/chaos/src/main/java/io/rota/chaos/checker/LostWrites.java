package io.rota.chaos.checker;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Acknowledged writes that the final state contradicts. After every fault is healed each key is read once;
 * values are unique per write, so the final value v names the write B that produced it. An acknowledged
 * write (or successful cas) A that was invoked after B had completed must be ordered after B in any
 * linearization, so if v is still the value, A was lost. (A final value of "absent" loses every acknowledged
 * write; a value nobody wrote loses them all too.) The linearizability check covers this already when the
 * final reads are in the history; this count is the headline number of a run.
 *
 * @param total  lost acknowledged writes over all keys
 * @param perKey the lost writes per key (only keys with losses)
 */
public record LostWrites(long total, Map<String, List<Operation>> perKey) {

    /**
     * Copies the map.
     *
     * @param total  see the record component
     * @param perKey see the record component
     */
    public LostWrites {
        perKey = Map.copyOf(perKey);
    }

    /**
     * Counts the acknowledged writes that the final reads contradict.
     *
     * @param ops        the history's operations
     * @param finalReads one acknowledged read per key, done after every other operation
     * @return the lost writes
     */
    public static LostWrites count(List<Operation> ops, List<Operation> finalReads) {
        Map<String, List<Operation>> lost = new TreeMap<>();
        long total = 0;
        for (Operation read : finalReads) {
            String v = read.value();
            Operation producer = null;
            for (Operation op : ops) {
                if (op.key().equals(read.key()) && v != null && op.writes(v)) {
                    producer = op;
                }
            }
            long producerDone = producer == null ? Long.MIN_VALUE : producer.completeNanos();
            List<Operation> keyLost = new ArrayList<>();
            for (Operation op : ops) {
                boolean acknowledgedWrite = op.key().equals(read.key()) && op.outcome() == Operation.Outcome.OK
                        && (op.fn() == Operation.Fn.WRITE || (op.fn() == Operation.Fn.CAS && op.casSucceeded()));
                if (acknowledgedWrite && op != producer && op.invokeNanos() > producerDone
                        && op.completeNanos() < read.invokeNanos()) {
                    keyLost.add(op);
                }
            }
            if (!keyLost.isEmpty()) {
                lost.put(read.key(), keyLost);
                total += keyLost.size();
            }
        }
        return new LostWrites(total, lost);
    }

    /**
     * For the report: the count and up to five lost writes per key.
     *
     * @return text
     */
    public String describe() {
        StringBuilder s = new StringBuilder("acknowledged writes lost: ").append(total).append('\n');
        perKey.forEach((key, list) -> {
            s.append("  key ").append(key).append(": ").append(list.size()).append(" lost, e.g.\n");
            list.stream().limit(5).forEach(op -> s.append("    ").append(op).append('\n'));
        });
        return s.toString();
    }
}
