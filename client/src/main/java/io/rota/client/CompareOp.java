package io.rota.client;

import io.rota.proto.Compare;

/** How a transaction compares a key's field with a given value. */
public enum CompareOp {
    /** The field equals the value. */
    EQUAL(Compare.Result.EQUAL),
    /** The field differs from the value. */
    NOT_EQUAL(Compare.Result.NOT_EQUAL),
    /** The field is greater than the value. */
    GREATER(Compare.Result.GREATER),
    /** The field is less than the value. */
    LESS(Compare.Result.LESS);

    final Compare.Result proto;

    CompareOp(Compare.Result proto) {
        this.proto = proto;
    }
}
