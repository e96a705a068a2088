package io.rota.client;

import io.rota.proto.DeleteRangeResponse;

import java.util.List;

/**
 * The result of a delete.
 *
 * @param deleted  how many keys were deleted
 * @param prevKvs  the deleted keys (immutable)
 * @param revision the revision of the delete (the current revision if nothing was deleted)
 */
public record DeleteResult(long deleted, List<KeyValue> prevKvs, long revision) implements OpResult {

    /**
     * Copies the list.
     *
     * @param deleted see the record component
     * @param prevKvs see the record component
     * @param revision see the record component
     */
    public DeleteResult {
        prevKvs = List.copyOf(prevKvs);
    }

    static DeleteResult of(DeleteRangeResponse r) {
        return new DeleteResult(r.getDeleted(), r.getPrevKvsList().stream().map(KeyValue::of).toList(),
                r.getHeader().getRevision());
    }
}
