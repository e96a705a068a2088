package io.rota.client;

import java.util.Objects;

/**
 * How {@link Kv#get(String, GetOptions)} reads: one key, a prefix, a range [key, end) or every key from
 * one on, at the current or a past revision, sorted by key or another field, with or without values,
 * linearizable or serializable. Immutable; start from {@link #builder()}.
 *
 * <pre>{@code
 * GetResult r = kv.get("jobs/", GetOptions.builder().prefix().keysOnly().limit(100).build());
 * }</pre>
 */
public final class GetOptions {

    /** What keys are sorted by (etcd's sort targets); ties stay in key order. */
    public enum SortTarget {
        /** The key's bytes, unsigned. */
        KEY,
        /** The key's version. */
        VERSION,
        /** The key's create revision. */
        CREATE,
        /** The key's mod revision. */
        MOD,
        /** The value's bytes, unsigned. */
        VALUE
    }

    /** The direction of a sort. */
    public enum SortOrder {
        /** Smallest first. */
        ASCEND,
        /** Largest first. */
        DESCEND
    }

    private static final GetOptions DEFAULTS = builder().build();

    private final boolean prefix;
    private final boolean fromKey;
    private final byte[] rangeEnd;
    private final SortTarget sortTarget;
    private final SortOrder sortOrder;
    private final boolean keysOnly;
    private final boolean countOnly;
    private final long limit;
    private final long revision;
    private final boolean serializable;

    private GetOptions(Builder b) {
        this.prefix = b.prefix;
        this.fromKey = b.fromKey;
        this.rangeEnd = b.rangeEnd;
        this.sortTarget = b.sortTarget;
        this.sortOrder = b.sortOrder;
        this.keysOnly = b.keysOnly;
        this.countOnly = b.countOnly;
        this.limit = b.limit;
        this.revision = b.revision;
        this.serializable = b.serializable;
    }

    /**
     * The defaults: one key, current revision, with values, linearizable, no limit.
     *
     * @return the default options
     */
    public static GetOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Starts building options (from the defaults).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Whether the key is a prefix (every key that starts with it; an empty prefix: all keys).
     *
     * @return true for a prefix read
     */
    public boolean prefix() {
        return prefix;
    }

    /**
     * Whether every key &ge; the given key is read (etcd's {@code --from-key}).
     *
     * @return true for a from-key read
     */
    public boolean fromKey() {
        return fromKey;
    }

    /**
     * The end of the half-open range [key, rangeEnd), if one was given.
     *
     * @return a copy of the end, or null for none
     */
    public byte[] rangeEnd() {
        return rangeEnd == null ? null : rangeEnd.clone();
    }

    /**
     * What the keys are sorted by (KEY unless {@link Builder#sort} said otherwise).
     *
     * @return the sort target
     */
    public SortTarget sortTarget() {
        return sortTarget;
    }

    /**
     * The direction of the sort (ascending unless {@link Builder#sort} said otherwise).
     *
     * @return the sort order
     */
    public SortOrder sortOrder() {
        return sortOrder;
    }

    /**
     * Whether values are left out (keys and revisions only).
     *
     * @return true for keys only
     */
    public boolean keysOnly() {
        return keysOnly;
    }

    /**
     * Whether only the count is returned (no keys).
     *
     * @return true for count only
     */
    public boolean countOnly() {
        return countOnly;
    }

    /**
     * The maximum number of keys returned.
     *
     * @return the limit, 0 for none
     */
    public long limit() {
        return limit;
    }

    /**
     * The revision read at.
     *
     * @return the revision, 0 for the current one
     */
    public long revision() {
        return revision;
    }

    /**
     * Whether the member that answers may serve the read from its own state without a ReadIndex round
     * (faster, works without a leader, but may be stale).
     *
     * @return true for a serializable read
     */
    public boolean serializable() {
        return serializable;
    }

    /** Builds {@link GetOptions}. */
    public static final class Builder {
        private boolean prefix;
        private boolean fromKey;
        private byte[] rangeEnd;
        private SortTarget sortTarget = SortTarget.KEY;
        private SortOrder sortOrder = SortOrder.ASCEND;
        private boolean keysOnly;
        private boolean countOnly;
        private long limit;
        private long revision;
        private boolean serializable;

        private Builder() {
        }

        /**
         * Read every key that starts with the given key.
         *
         * @return this builder
         */
        public Builder prefix() {
            this.prefix = true;
            return this;
        }

        /**
         * Read every key &ge; the given key (etcd's {@code --from-key}).
         *
         * @return this builder
         */
        public Builder fromKey() {
            this.fromKey = true;
            return this;
        }

        /**
         * Read the half-open range [key, {@code end}) (etcd's {@code get KEY END}).
         *
         * @param end the first key not read; must sort after the key
         * @return this builder
         */
        public Builder rangeEnd(byte[] end) {
            if (end == null || end.length == 0) {
                throw new IllegalArgumentException("the range end must not be empty");
            }
            this.rangeEnd = end.clone();
            return this;
        }

        /**
         * Sort the keys by {@code target} in {@code order} on the server, before the limit applies (etcd's
         * {@code --sort-by}, {@code --order}).
         *
         * @param target what to sort by
         * @param order  the direction
         * @return this builder
         */
        public Builder sort(SortTarget target, SortOrder order) {
            this.sortTarget = Objects.requireNonNull(target, "target");
            this.sortOrder = Objects.requireNonNull(order, "order");
            return this;
        }

        /**
         * Leave the values out.
         *
         * @return this builder
         */
        public Builder keysOnly() {
            this.keysOnly = true;
            return this;
        }

        /**
         * Return only the count of matching keys.
         *
         * @return this builder
         */
        public Builder countOnly() {
            this.countOnly = true;
            return this;
        }

        /**
         * Return at most {@code limit} keys ({@link GetResult#more()} tells whether more matched).
         *
         * @param limit a non-negative number; 0 for no limit
         * @return this builder
         */
        public Builder limit(long limit) {
            if (limit < 0) {
                throw new IllegalArgumentException("limit must not be negative (got " + limit + ")");
            }
            this.limit = limit;
            return this;
        }

        /**
         * Read as of {@code revision}; older than the retained history fails with COMPACTED, newer than
         * the current revision with INVALID_ARGUMENT.
         *
         * @param revision a non-negative revision; 0 for the current one
         * @return this builder
         */
        public Builder revision(long revision) {
            if (revision < 0) {
                throw new IllegalArgumentException("revision must not be negative (got " + revision + ")");
            }
            this.revision = revision;
            return this;
        }

        /**
         * Let the answering member serve the read from its own state (may be stale).
         *
         * @return this builder
         */
        public Builder serializable() {
            this.serializable = true;
            return this;
        }

        /**
         * The options.
         *
         * @return immutable options
         */
        public GetOptions build() {
            if ((prefix ? 1 : 0) + (fromKey ? 1 : 0) + (rangeEnd != null ? 1 : 0) > 1) {
                throw new IllegalArgumentException("prefix, fromKey and rangeEnd exclude each other");
            }
            return new GetOptions(this);
        }
    }
}
