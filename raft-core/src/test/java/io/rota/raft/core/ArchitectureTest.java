package io.rota.raft.core;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core is a pure, deterministic state machine: no I/O, no threads, no clock, no logging, no transport
 * or storage types. These rules keep it that way (they check the main classes only, not the tests).
 */
class ArchitectureTest {

    private static final String CORE = "io.rota.raft.core..";
    private static JavaClasses core;

    @BeforeAll
    static void importCore() {
        core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.rota.raft.core");
        assertTrue(core.contain(RaftNode.class), "the main classes were imported");
    }

    @Test
    @DisplayName("The core depends only on java.lang, java.util and itself")
    void onlyJavaLangJavaUtilAndItself() {
        ArchRule rule = classes().that().resideInAPackage(CORE)
                .should().onlyDependOnClassesThat().resideInAnyPackage("java.lang..", "java.util..", CORE)
                .because("the core does no I/O and must stay deterministic");
        rule.check(core);
    }

    @Test
    @DisplayName("The core uses no I/O, network, clock, threads, concurrency, logging, storage, transport or protobuf")
    void noForbiddenDependencies() {
        ArchRule rule = noClasses().that().resideInAPackage(CORE)
                .should().dependOnClassesThat().resideInAnyPackage(
                        "java.io..", "java.nio..", "java.net..", "java.time..",
                        "java.util.concurrent..", "java.util.logging..",
                        "org.slf4j..", "io.netty..", "org.rocksdb..", "com.google.protobuf..", "io.rota.proto..")
                .orShould().dependOnClassesThat().belongToAnyOf(Thread.class, System.class)
                .because("time arrives as tick(), messages as step(), and effects leave through Ready");
        rule.check(core);
    }
}
