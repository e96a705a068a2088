package io.rota.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One key as stored, immutable (the byte arrays are copied in and out).
 *
 * @param key            the key
 * @param value          the value (empty when read with keys only)
 * @param createRevision revision of the write that created the key (a lock's fencing token)
 * @param modRevision    revision of the last write to the key
 * @param version        1 on creation, +1 per put
 * @param lease          the lease the key is attached to (0: none)
 */
public record KeyValue(byte[] key, byte[] value, long createRevision, long modRevision, long version, long lease) {

    /**
     * Copies the arrays.
     *
     * @param key see the record component
     * @param value see the record component
     * @param createRevision see the record component
     * @param modRevision see the record component
     * @param version see the record component
     * @param lease see the record component
     */
    public KeyValue {
        key = key.clone();
        value = value.clone();
    }

    static KeyValue of(io.rota.proto.KeyValue kv) {
        return new KeyValue(kv.getKey().toByteArray(), kv.getValue().toByteArray(), kv.getCreateRevision(),
                kv.getModRevision(), kv.getVersion(), kv.getLease());
    }

    /**
     * The key.
     *
     * @return a copy of the key's bytes
     */
    @Override
    public byte[] key() {
        return key.clone();
    }

    /**
     * The value.
     *
     * @return a copy of the value's bytes
     */
    @Override
    public byte[] value() {
        return value.clone();
    }

    /**
     * The key as UTF-8 text.
     *
     * @return the decoded key
     */
    public String keyString() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /**
     * The value as UTF-8 text.
     *
     * @return the decoded value
     */
    public String valueString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** Equal when every field is (arrays by content). */
    @Override
    public boolean equals(Object o) {
        return o instanceof KeyValue k && Arrays.equals(key, k.key) && Arrays.equals(value, k.value)
                && createRevision == k.createRevision && modRevision == k.modRevision
                && version == k.version && lease == k.lease;
    }

    /** Consistent with {@link #equals(Object)}. */
    @Override
    public int hashCode() {
        return 31 * (31 * Arrays.hashCode(key) + Arrays.hashCode(value)) + Long.hashCode(modRevision);
    }

    /** For humans: key and value as UTF-8, and the revisions. */
    @Override
    public String toString() {
        return "KeyValue[" + keyString() + "=" + valueString() + ", create=" + createRevision + ", mod="
                + modRevision + ", version=" + version + ", lease=" + lease + "]";
    }
}
