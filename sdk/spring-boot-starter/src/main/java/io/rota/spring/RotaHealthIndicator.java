package io.rota.spring;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** The {@link RotaHealth} check as a Spring Boot 4 health indicator ({@code /actuator/health/rota}). */
public final class RotaHealthIndicator implements HealthIndicator {

    private final RotaHealth check;

    /**
     * Adapts a check.
     *
     * @param check the check
     */
    public RotaHealthIndicator(RotaHealth check) {
        this.check = check;
    }

    @Override
    public Health health() {
        RotaHealth.Report r = check.check();
        return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
    }
}
