package io.rota.spring.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rota.client.RotaClient;
import io.rota.client.recipes.JobContext;
import io.rota.spring.RotaMetrics;
import io.rota.spring.RotaProperties;
import io.rota.spring.SingletonJob;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * A small Spring Boot application as a new user writes it: the starter, one {@code @SingletonJob} method, no
 * Rota bean of its own. {@link BootLinesProcessTest} runs it in JVMs whose class path is a hand-assembled
 * Boot 3.5 (Netty 4.1) or Boot 4.0 (Netty 4.2) application's: the starter jar, the shaded SDK jar, Spring
 * Boot's jars and this class. Each run writes {@code ticker/runs/<fire time>/<instance>} to the cluster and
 * prints a line; at start it prints the Boot line, the application's own Netty, where the SDK came from and
 * the health indicator's status.
 */
@SpringBootApplication
public class TickerApplication {

    /** The meter registry an actuator application would have (the actuator's auto-configuration is not here). */
    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    /** Binds the starter's meters before the jobs start, as the actuator does for every MeterBinder bean. */
    @Bean
    SmartInitializingSingleton bindRotaMeters(MeterRegistry registry, ObjectProvider<RotaMetrics> metrics) {
        return () -> metrics.ifAvailable(m -> m.bindTo(registry));
    }

    public static void main(String[] args) {
        SpringApplication.run(TickerApplication.class, args);
    }

    /** The job: one fire time every {@code ticker.rate}, recorded in the cluster by whichever instance runs it. */
    @Component
    public static class Ticker {

        private final RotaClient rota;
        private final MeterRegistry registry;
        private final ApplicationContext context;
        private final String instance;

        public Ticker(RotaClient rota, MeterRegistry registry, ApplicationContext context, RotaProperties props) {
            this.rota = rota;
            this.registry = registry;
            this.context = context;
            this.instance = props.instanceId();
        }

        @SingletonJob(name = "ticker", fixedRate = "${ticker.rate}")
        public void tick(JobContext ctx) {
            rota.kv().put("ticker/runs/" + ctx.fireTime().toEpochMilli() + "/" + instance,
                    Long.toString(ctx.fencingToken()));
            System.out.println("ran fire=" + ctx.fireTime().toEpochMilli() + " token=" + ctx.fencingToken()
                    + " calls=" + (long) registry.find("rota.client.calls").timers().stream()
                    .mapToLong(t -> t.count()).sum());
        }

        /** What the test checks once the application is up: the line, the class path, the health bean. */
        @EventListener(ApplicationReadyEvent.class)
        public void ready() throws Exception {
            System.out.println("boot=" + SpringBootVersion.getVersion());
            System.out.println("app netty=" + io.netty.util.Version.identify().get("netty-common").artifactVersion());
            System.out.println("sdk from=" + RotaClient.class.getProtectionDomain().getCodeSource().getLocation());
            // The health API differs between the lines (design F3): called by name, as the actuator would.
            Object indicator = context.getBean("rotaHealthIndicator");
            Object health = indicator.getClass().getMethod("health").invoke(indicator);
            System.out.println("health bean=" + indicator.getClass().getSimpleName() + " status="
                    + health.getClass().getMethod("getStatus").invoke(health));
            System.out.println("metrics bean=" + context.getBeanNamesForType(RotaMetrics.class).length);
            System.out.println("ready instance=" + instance);
        }
    }
}
