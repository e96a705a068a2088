package io.rota.client;

import io.rota.proto.Event;

/**
 * One change to a key, as a watch delivers it.
 *
 * @param type   whether the key was written or deleted
 * @param kv     PUT: the key after the write; DELETE: the key and the revision of the delete only
 * @param prevKv the key before the change, or null when it did not exist or the watch did not ask for it
 *               ({@link WatchOptions#withPrevKv()})
 */
public record WatchEvent(Type type, KeyValue kv, KeyValue prevKv) {

    /**
     * An event without its previous key.
     *
     * @param type whether the key was written or deleted
     * @param kv   the key after the change
     */
    public WatchEvent(Type type, KeyValue kv) {
        this(type, kv, null);
    }

    /** The kind of change. */
    public enum Type {
        /** The key was created or overwritten. */
        PUT,
        /** The key was deleted. */
        DELETE
    }

    /**
     * The revision of the change.
     *
     * @return the key's mod revision
     */
    public long revision() {
        return kv.modRevision();
    }

    static WatchEvent of(Event e) {
        return new WatchEvent(e.getType() == Event.EventType.DELETE ? Type.DELETE : Type.PUT, KeyValue.of(e.getKv()),
                e.hasPrevKv() ? KeyValue.of(e.getPrevKv()) : null);
    }
}
