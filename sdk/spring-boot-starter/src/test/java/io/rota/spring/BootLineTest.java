package io.rota.spring;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The tests of this directory run twice, on each Boot line; this one proves which line each run had. */
class BootLineTest {

    @Test
    @DisplayName("the Spring Boot on the test classpath is the one this module's build promises")
    void bootLineAsPromised() {
        String expected = System.getProperty("expected.spring-boot.version");
        assumeTrue(expected != null, "run by Maven (which sets expected.spring-boot.version) to check the Boot line");
        assertEquals(expected, SpringBootVersion.getVersion());
    }
}
