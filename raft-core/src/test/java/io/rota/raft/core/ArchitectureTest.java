package io.rota.raft.core;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core is a pure, deterministic state machine: no I/O, no threads, no clock, no logging, no transport
 * or storage types. These rules keep it that way (they check the main classes only, not the tests). Since
 * raft-core has no compile dependency at all (design.md HS1), the compiler already refuses any library or
 * other Rota module here; these rules keep out what the JDK itself offers.
 */
class ArchitectureTest {

    private static final String CORE = "io.rota.raft.core..";

    /**
     * The stream types the {@link StateMachine} port names for snapshot images (design.md HS4): abstract
     * streams and in-memory ones, no file, socket or console. No other core class uses java.io at all.
     */
    private static final DescribedPredicate<JavaClass> IMAGE_STREAMS = belongToAnyOf(InputStream.class,
            OutputStream.class, IOException.class, UncheckedIOException.class, ByteArrayInputStream.class,
            ByteArrayOutputStream.class).as("the image stream types of StateMachine");

    private static JavaClasses core;

    @BeforeAll
    static void importCore() {
        core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.rota.raft.core");
        assertTrue(core.contain(RaftNode.class), "the main classes were imported");
    }

    @Test
    @DisplayName("The core depends only on java.lang, java.util, itself and the image stream types")
    void onlyJavaLangJavaUtilAndItself() {
        ArchRule rule = classes().that().resideInAPackage(CORE)
                .should().onlyDependOnClassesThat(resideInAnyPackage("java.lang..", "java.util..", CORE)
                        .or(IMAGE_STREAMS))
                .because("the core does no I/O and must stay deterministic");
        rule.check(core);
    }

    @Test
    @DisplayName("The core uses no I/O, network, clock, threads, concurrency, logging, storage, transport or protobuf")
    void noForbiddenDependencies() {
        ArchRule rule = noClasses().that().resideInAPackage(CORE)
                .should().dependOnClassesThat().resideInAnyPackage(
                        "java.nio..", "java.net..", "java.time..",
                        "java.util.concurrent..", "java.util.logging..",
                        "org.slf4j..", "io.netty..", "org.rocksdb..", "com.google.protobuf..", "io.rota.proto..",
                        "io.rota.raft.node..", "io.rota.raft.storage..", "io.rota.raft.transport..")
                .orShould().dependOnClassesThat().belongToAnyOf(Thread.class, System.class)
                .because("time arrives as tick(), messages as step(), and effects leave through Ready");
        rule.check(core);
    }

    @Test
    @DisplayName("Only the StateMachine port names java.io, and only its image stream types")
    void onlyTheStateMachinePortNamesStreams() {
        ArchRule rule = noClasses().that().resideInAPackage(CORE).and(not(belongToAnyOf(StateMachine.class)))
                .should().dependOnClassesThat().resideInAPackage("java.io..")
                .because("a state machine's snapshot image is a stream the runtime opens on a file; the core itself"
                        + " reads and writes nothing (design.md HS4)");
        rule.check(core);
    }
}
