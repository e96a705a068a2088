package io.rota.spring;

import io.rota.client.ClientListener;
import io.rota.client.RotaClient;
import io.rota.client.recipes.JobListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Rota for a Spring Boot 4.0 or 3.5 application, active once {@code rota.endpoints} is set (a string or a
 * list): a
 * {@link RotaClient} bean (closed when the context closes, after the jobs stopped), the
 * {@link SingletonJob @SingletonJob} methods, and with Micrometer on the classpath, {@link RotaMetrics}.
 * The health indicator is in {@link RotaHealthAutoConfiguration} (Boot 4) and
 * {@link RotaBoot3HealthAutoConfiguration} (Boot 3.5). Every bean backs off if the application defines its own.
 */
@AutoConfiguration
@Conditional(OnRotaEndpoints.class)
@EnableConfigurationProperties(RotaProperties.class)
public class RotaAutoConfiguration {

    /**
     * The client, from {@code rota.*}, with every {@link ClientListener} bean (metrics) attached.
     *
     * @param properties the settings
     * @param listeners  client listeners
     * @return the client; Spring closes it on shutdown
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RotaClient rotaClient(RotaProperties properties, ObjectProvider<ClientListener> listeners) {
        RotaClient.Builder b = RotaClient.builder().endpoints(properties.endpoints())
                .callTimeout(properties.callTimeout()).attemptTimeout(properties.attemptTimeout());
        listeners.orderedStream().forEach(b::listener);
        return b.build();
    }

    /**
     * Runs the {@link SingletonJob @SingletonJob} methods (static: a post-processor is created before the
     * other beans, and must not make this configuration's instance early).
     *
     * @param rota        the client
     * @param properties  the settings
     * @param listeners   job listeners
     * @param environment for placeholders in the annotations
     * @return the registrar
     */
    @Bean
    @ConditionalOnMissingBean
    public static SingletonJobRegistrar rotaSingletonJobRegistrar(ObjectProvider<RotaClient> rota,
                                                                 ObjectProvider<RotaProperties> properties,
                                                                 ObjectProvider<JobListener> listeners,
                                                                 Environment environment) {
        return new SingletonJobRegistrar(rota, properties, listeners, environment);
    }

    /** Micrometer meters, when Micrometer is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    static class Metrics {

        /**
         * The meters; listens to the client and the jobs.
         *
         * @return the binder
         */
        @Bean
        @ConditionalOnMissingBean
        RotaMetrics rotaMetrics() {
            return new RotaMetrics();
        }
    }
}
