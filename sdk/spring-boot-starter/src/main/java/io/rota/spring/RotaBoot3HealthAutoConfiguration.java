package io.rota.spring;

import io.rota.client.RotaClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;

/**
 * The health indicator {@code rota} on Spring Boot 3.5, whose health API is
 * {@code org.springframework.boot.actuate.health} (spring-boot-actuator). Named by class name in the
 * conditions, so that on Boot 4 (where spring-boot-health is present) this class is skipped without loading
 * the types it names (design F3).
 */
@AutoConfiguration(after = RotaAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
@ConditionalOnMissingClass("org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(RotaClient.class)
public class RotaBoot3HealthAutoConfiguration {

    /**
     * The indicator (bean name {@code rotaHealthIndicator}: shown as {@code rota}).
     *
     * @param rota       the client
     * @param properties the settings (health timeout)
     * @return the indicator
     */
    @Bean
    @ConditionalOnMissingBean(name = "rotaHealthIndicator")
    public RotaBoot3HealthIndicator rotaHealthIndicator(RotaClient rota, RotaProperties properties) {
        return new RotaBoot3HealthIndicator(new RotaHealth(rota, properties.healthTimeout()));
    }
}
