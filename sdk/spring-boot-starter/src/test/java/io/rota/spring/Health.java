package io.rota.spring;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContext;

import java.lang.reflect.Method;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the {@code rotaHealthIndicator} bean on either Boot line. The same test sources run on Boot 4.0
 * (this module) and Boot 3.5 (spring-boot-starter-boot3-test), whose health types differ; the tests name
 * neither, and check that the indicator of the running line is the one configured.
 */
final class Health {

    /** What an indicator said. */
    record Seen(String status, Map<?, ?> details) {
    }

    private Health() {
    }

    static boolean boot4() {
        return SpringBootVersion.getVersion().startsWith("4.");
    }

    static Seen of(ApplicationContext context) throws Exception {
        Object indicator = context.getBean("rotaHealthIndicator");
        assertThat(indicator.getClass().getSimpleName())
                .isEqualTo(boot4() ? "RotaHealthIndicator" : "RotaBoot3HealthIndicator");
        Method health = indicator.getClass().getMethod("health");
        Object h = health.invoke(indicator);
        String status = h.getClass().getMethod("getStatus").invoke(h).toString();
        Map<?, ?> details = (Map<?, ?>) h.getClass().getMethod("getDetails").invoke(h);
        return new Seen(status, details);
    }
}
