package io.rota.chaos.checker;

import java.util.List;

/**
 * The verdict on a whole history: the combination of its keys' verdicts (linearizability is compositional:
 * a history is linearizable iff each key's sub-history is).
 *
 * @param verdict the combined verdict
 * @param keys    one result per key, in key order
 */
public record CheckResult(Verdict verdict, List<KeyResult> keys) {

    /**
     * Copies the list.
     *
     * @param verdict see the record component
     * @param keys    see the record component
     */
    public CheckResult {
        keys = List.copyOf(keys);
    }

    /**
     * The keys whose verdict is not YES.
     *
     * @return the failing or undecided keys
     */
    public List<KeyResult> problems() {
        return keys.stream().filter(k -> k.verdict() != Verdict.YES).toList();
    }
}
