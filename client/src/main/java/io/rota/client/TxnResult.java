package io.rota.client;

import java.util.List;

/**
 * The result of a transaction, or of one nested in another ({@link Op#txn}: then one of the outer results).
 *
 * @param succeeded whether every comparison held (so the {@code then} branch ran, else {@code orElse})
 * @param responses one result per operation of the branch that ran, in order (immutable)
 * @param revision  the store revision after the transaction (the outer one's, for a nested transaction)
 */
public record TxnResult(boolean succeeded, List<OpResult> responses, long revision) implements OpResult {

    /**
     * Copies the list.
     *
     * @param succeeded see the record component
     * @param responses see the record component
     * @param revision see the record component
     */
    public TxnResult {
        responses = List.copyOf(responses);
    }
}
