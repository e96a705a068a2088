package io.rota.raft.core;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/** The core does no I/O and uses no library: only the JDK's pure parts and itself. */
class CoreArchitectureTest {

    private final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.rota.raft");

    @Test
    void coreDependsOnlyOnThePureJdk() {
        classes().that().resideInAPackage("io.rota.raft.core..")
                .should().onlyDependOnClassesThat()
                .resideInAnyPackage("io.rota.raft.core..", "java.lang..", "java.util..")
                .check(main);
    }
}
