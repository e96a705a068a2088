package io.rota.client;

/**
 * The result of one operation: of a get, a put or a delete (also inside a transaction), or of a transaction
 * nested in another ({@link Op#txn}).
 */
public sealed interface OpResult permits GetResult, PutResult, DeleteResult, TxnResult {

    /**
     * The store revision the operation observed or wrote.
     *
     * @return the revision
     */
    long revision();
}
