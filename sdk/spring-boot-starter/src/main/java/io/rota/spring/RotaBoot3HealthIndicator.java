package io.rota.spring;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** The {@link RotaHealth} check as a Spring Boot 3.5 health indicator ({@code /actuator/health/rota}). */
public final class RotaBoot3HealthIndicator implements HealthIndicator {

    private final RotaHealth check;

    /**
     * Adapts a check.
     *
     * @param check the check
     */
    public RotaBoot3HealthIndicator(RotaHealth check) {
        this.check = check;
    }

    @Override
    public Health health() {
        RotaHealth.Report r = check.check();
        return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
    }
}
