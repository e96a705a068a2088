package io.rota.raft.core;

import java.util.Objects;

/**
 * What a snapshot replaces (§7, Figure 12): every entry up to and including {@code lastIncludedIndex},
 * whose term was {@code lastIncludedTerm}, and the configuration as of that index.
 */
public record SnapshotMetadata(long lastIncludedIndex, long lastIncludedTerm, Configuration configuration) {

    public SnapshotMetadata {
        if (lastIncludedIndex < 1 || lastIncludedTerm < 1) {
            throw new IllegalArgumentException("snapshot must cover at least entry 1: "
                    + lastIncludedIndex + "@" + lastIncludedTerm);
        }
        Objects.requireNonNull(configuration, "configuration");
    }
}
