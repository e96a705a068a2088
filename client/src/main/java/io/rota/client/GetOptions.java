package io.rota.client;

/**
 * How {@link Kv#get(String, GetOptions)} reads: one key or a prefix, at the current or a past revision,
 * with or without values, linearizable or serializable. Immutable; start from {@link #builder()}.
 *
 * <pre>{@code
 * GetResult r = kv.get("jobs/", GetOptions.builder().prefix().keysOnly().limit(100).build());
 * }</pre>
 */
public final class GetOptions {

    private static final GetOptions DEFAULTS = builder().build();

    private final boolean prefix;
    private final boolean keysOnly;
    private final boolean countOnly;
    private final long limit;
    private final long revision;
    private final boolean serializable;

    private GetOptions(Builder b) {
        this.prefix = b.prefix;
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
            return new GetOptions(this);
        }
    }
}
