package io.rota.examples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The daily-reminder story as a Spring Boot application: every instance runs this same application, and
 * {@link Reminders#sendAll} runs once per fire time across all of them. Settings in application.yml.
 */
@SpringBootApplication
public class ReminderApplication {

    /**
     * Starts one instance.
     *
     * @param args Spring Boot arguments, e.g. {@code --rota.endpoints=h1:2379,h2:2379 --rota.instance-id=app-1}
     */
    public static void main(String[] args) {
        SpringApplication.run(ReminderApplication.class, args);
    }
}
