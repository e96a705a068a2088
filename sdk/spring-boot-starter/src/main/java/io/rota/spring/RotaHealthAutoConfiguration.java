package io.rota.spring;

import io.rota.client.RotaClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The health indicator {@code rota} on Spring Boot 4, whose health API is
 * {@code org.springframework.boot.health.contributor} (module spring-boot-health). Named by class name in the
 * condition, so that on Boot 3.5 this class is skipped without loading the missing types (design F3).
 */
@AutoConfiguration(after = RotaAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(RotaClient.class)
public class RotaHealthAutoConfiguration {

    /**
     * The indicator (bean name {@code rotaHealthIndicator}: shown as {@code rota}).
     *
     * @param rota       the client
     * @param properties the settings (health timeout)
     * @return the indicator
     */
    @Bean
    @ConditionalOnMissingBean(name = "rotaHealthIndicator")
    public RotaHealthIndicator rotaHealthIndicator(RotaClient rota, RotaProperties properties) {
        return new RotaHealthIndicator(new RotaHealth(rota, properties.healthTimeout()));
    }
}
