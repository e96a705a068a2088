package io.rota.server;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The space quota and auto-compaction flags of {@code rota server} (issue 18), as etcd spells them:
 * {@code --quota-backend-bytes}, {@code --auto-compaction-mode} and {@code --auto-compaction-retention}.
 * A refusal is a {@link FlagException} naming the flag. Build one with {@link #builder} (the defaults) or
 * {@link #toBuilder}; {@link #parseRetention} reads the retention flag as etcd does.
 *
 * @param quotaBackendBytes   the accounted size past which the leader arms NOSPACE; 0 means
 *                            {@link #DEFAULT_QUOTA_BACKEND_BYTES} (etcd's convention)
 * @param autoCompactionMode  {@code NONE} (the default: only {@code rotactl compaction} compacts),
 *                            {@code PERIODIC} or {@code REVISION}
 * @param retentionPeriod     PERIODIC: keep at least this much history (on the leader's monotonic clock)
 * @param retentionRevisions  REVISION: keep the latest this many revisions
 */
public record MaintenanceConfig(long quotaBackendBytes, AutoCompactionMode autoCompactionMode,
                                Duration retentionPeriod, long retentionRevisions) {

    /** etcd's {@code --auto-compaction-mode}; {@code NONE} is the unset flag. */
    public enum AutoCompactionMode { NONE, PERIODIC, REVISION }

    /** 2 GiB, etcd's default quota: the state lives in the heap, so it is also a memory bound to size -Xmx by. */
    public static final long DEFAULT_QUOTA_BACKEND_BYTES = 2L << 30;
    /** 8 GiB: etcd's suggested maximum; beyond it a snapshot of the in-heap state is impractical. */
    public static final long MAX_QUOTA_BACKEND_BYTES = 8L << 30;
    /** No auto-compaction unless asked, as etcd. */
    public static final AutoCompactionMode DEFAULT_AUTO_COMPACTION_MODE = AutoCompactionMode.NONE;
    /** With PERIODIC and no retention given: one hour. */
    public static final Duration DEFAULT_RETENTION_PERIOD = Duration.ofHours(1);
    /** With REVISION and no retention given: the latest 1000 revisions. */
    public static final long DEFAULT_RETENTION_REVISIONS = 1000;

    public MaintenanceConfig {
        Objects.requireNonNull(autoCompactionMode, "autoCompactionMode");
        Objects.requireNonNull(retentionPeriod, "retentionPeriod");
        if (quotaBackendBytes == 0) {
            quotaBackendBytes = DEFAULT_QUOTA_BACKEND_BYTES;
        }
        if (quotaBackendBytes < 0 || quotaBackendBytes > MAX_QUOTA_BACKEND_BYTES) {
            throw new FlagException("--quota-backend-bytes", "--quota-backend-bytes must be between 1 and "
                    + MAX_QUOTA_BACKEND_BYTES + " (8 GiB), or 0 for the default 2 GiB, got " + quotaBackendBytes);
        }
        if (retentionPeriod.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new FlagException("--auto-compaction-retention", "--auto-compaction-retention must be at least"
                    + " 1s with --auto-compaction-mode periodic, got " + retentionPeriod);
        }
        if (retentionRevisions < 1) {
            throw new FlagException("--auto-compaction-retention", "--auto-compaction-retention must be at least"
                    + " 1 revision with --auto-compaction-mode revision, got " + retentionRevisions);
        }
    }

    public static MaintenanceConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().quotaBackendBytes(quotaBackendBytes).autoCompactionMode(autoCompactionMode)
                .retentionPeriod(retentionPeriod).retentionRevisions(retentionRevisions);
    }

    /**
     * The flags as typed: {@code mode} "" (unset), "periodic" or "revision"; {@code retention} "" (the mode's
     * default), for periodic a duration ("30m", "1h", "90s", or a bare number of hours as etcd), for revision
     * a number of revisions.
     */
    public static MaintenanceConfig parse(long quotaBackendBytes, String mode, String retention) {
        Builder b = builder().quotaBackendBytes(quotaBackendBytes);
        String m = mode == null ? "" : mode.trim().toLowerCase(Locale.ROOT);
        String r = retention == null ? "" : retention.trim();
        switch (m) {
            case "" -> {
                if (!r.isEmpty() && !r.equals("0")) {
                    throw new FlagException("--auto-compaction-retention", "--auto-compaction-retention needs"
                            + " --auto-compaction-mode periodic or revision");
                }
            }
            case "periodic" -> b.autoCompactionMode(AutoCompactionMode.PERIODIC)
                    .retentionPeriod(r.isEmpty() ? DEFAULT_RETENTION_PERIOD : parseRetention(r));
            case "revision" -> {
                b.autoCompactionMode(AutoCompactionMode.REVISION);
                if (!r.isEmpty()) {
                    try {
                        b.retentionRevisions(Long.parseLong(r));
                    } catch (NumberFormatException e) {
                        throw new FlagException("--auto-compaction-retention", "--auto-compaction-retention with"
                                + " --auto-compaction-mode revision is a number of revisions, got '" + r + "'");
                    }
                }
            }
            default -> throw new FlagException("--auto-compaction-mode", "--auto-compaction-mode must be periodic or"
                    + " revision, got '" + mode + "'");
        }
        return b.build();
    }

    /** A periodic retention: {@code 90s}, {@code 30m}, {@code 1h}, or a bare number of hours (etcd's default unit). */
    static Duration parseRetention(String value) {
        try {
            char unit = value.charAt(value.length() - 1);
            if (Character.isDigit(unit)) {
                return Duration.ofHours(Long.parseLong(value));
            }
            long n = Long.parseLong(value.substring(0, value.length() - 1));
            return switch (unit) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                default -> throw new NumberFormatException();
            };
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            throw new FlagException("--auto-compaction-retention", "--auto-compaction-retention with"
                    + " --auto-compaction-mode periodic is a duration such as 90s, 30m or 1h (a bare number is hours),"
                    + " got '" + value + "'");
        }
    }

    /** Builds a {@link MaintenanceConfig}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private long quotaBackendBytes = DEFAULT_QUOTA_BACKEND_BYTES;
        private AutoCompactionMode autoCompactionMode = DEFAULT_AUTO_COMPACTION_MODE;
        private Duration retentionPeriod = DEFAULT_RETENTION_PERIOD;
        private long retentionRevisions = DEFAULT_RETENTION_REVISIONS;

        private Builder() {
        }

        public Builder quotaBackendBytes(long quotaBackendBytes) {
            this.quotaBackendBytes = quotaBackendBytes;
            return this;
        }

        public Builder autoCompactionMode(AutoCompactionMode autoCompactionMode) {
            this.autoCompactionMode = autoCompactionMode;
            return this;
        }

        public Builder retentionPeriod(Duration retentionPeriod) {
            this.retentionPeriod = retentionPeriod;
            return this;
        }

        public Builder retentionRevisions(long retentionRevisions) {
            this.retentionRevisions = retentionRevisions;
            return this;
        }

        public MaintenanceConfig build() {
            return new MaintenanceConfig(quotaBackendBytes, autoCompactionMode, retentionPeriod, retentionRevisions);
        }
    }
}
