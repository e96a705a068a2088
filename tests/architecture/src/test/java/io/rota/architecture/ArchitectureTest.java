package io.rota.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import io.rota.chaos.ChaosMain;
import io.rota.client.RotaClient;
import io.rota.client.cli.Rotactl;
import io.rota.client.recipes.Lock;
import io.rota.examples.reminders.DemoDriver;
import io.rota.proto.Frame;
import io.rota.raft.core.RaftNode;
import io.rota.raft.node.RaftDriver;
import io.rota.server.RotaServer;
import io.rota.server.api.RequestRouter;
import io.rota.server.etcd.EtcdServer;
import io.rota.server.http.HttpServer;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.shedlock.RotaLockProvider;
import io.rota.spring.RotaAutoConfiguration;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Random;
import java.util.Timer;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The house rules, checked on the main classes of every module (this module depends on all of them, so
 * its test classpath holds them all): no package cycles, main code never depends on test code, and the
 * module graph points one way. The Raft core's purity has its own rules next to it, in raft-core's
 * {@code io.rota.raft.core.ArchitectureTest} (and raft-core has no compile dependency at all, design.md HS1).
 * How to see each rule fail: docs/design.md, H2, HS6 and HS20 (the rules (d) on kv-server's rooms).
 *
 * <p>A layer below is named by its module; the folders group the modules the specification does not name
 * (README, Layout; design.md HS60): the recipes and the adapters (shedlock, spring) in {@code sdk/} beside
 * {@code client/}, rotactl and chaos in {@code tools/}, testkit in {@code tests/} (with this module), the
 * examples in {@code examples/}. A folder is no layer: the graph is the modules', wherever they sit.
 */
class ArchitectureTest {

    /** Where Maven puts compiled tests: a test-classes directory, or a test-jar ({@code *-tests.jar}). */
    private static final Pattern TEST_OUTPUT = Pattern.compile(".*(/test-classes/|-tests\\.jar!/).*");

    /** An array is the code of its element class (an array type has no class file of its own). */
    private static final DescribedPredicate<JavaClass> TEST_CODE = describe("test code",
            c -> c.getBaseComponentType().getSource()
                    .map(s -> TEST_OUTPUT.matcher(s.getUri().toString()).matches()).orElse(false));

    /** A class found on the classpath outside any test output; a class that is not there at all is not. */
    private static final DescribedPredicate<JavaClass> MAIN_CODE = describe("main code",
            c -> c.getBaseComponentType().getSource().isPresent() && !TEST_CODE.test(c));

    /** The SDK: io.rota.client and any subpackage of its own, but not the recipes' or rotactl's packages. */
    private static final DescribedPredicate<JavaClass> SDK = resideInAPackage("io.rota.client..")
            .and(not(resideInAnyPackage("io.rota.client.recipes..", "io.rota.client.cli..")))
            .as("the SDK (io.rota.client)");

    /** kv-server/state: what every replica computes identically (design.md HS11). */
    private static final String[] STATE = {"io.rota.server.kv..", "io.rota.server.session..", "io.rota.server.lease..",
            "io.rota.server.auth.."};
    /** kv-server/runtime: the member's runtime around the state machine (design.md HS15). */
    private static final String[] RUNTIME = {"io.rota.server.api..", "io.rota.server.cluster..", "io.rota.server.watch..",
            "io.rota.server.authgate..", "io.rota.server.maintenance..", "io.rota.server.backup.."};
    /** kv-server/etcd: the etcd door. */
    private static final String[] ETCD = {"io.rota.server.etcd.."};
    /** kv-server/http: the HTTP port, lab mode, the fault clock (design.md HS16). */
    private static final String[] HTTP = {"io.rota.server.http..", "io.rota.server.lab..", "io.rota.server.fault.."};

    /** Every io.rota class on the classpath, main and test. */
    private static JavaClasses all;
    /** The main classes of every module. */
    private static JavaClasses main;

    @BeforeAll
    static void importEveryModule() {
        all = new ClassFileImporter().importPackages("io.rota");
        main = all.that(MAIN_CODE);
        for (Class<?> oneOfEachModule : List.of(Frame.class, ProcessCluster.class, RaftNode.class, RaftDriver.class,
                RotaServer.class, RotaClient.class, Lock.class, Rotactl.class, DemoDriver.class, ChaosMain.class,
                RotaLockProvider.class, RotaAutoConfiguration.class, CoordinationStateMachine.class,
                RequestRouter.class, EtcdServer.class, HttpServer.class)) {
            assertTrue(main.contain(oneOfEachModule), oneOfEachModule + " was imported as main code");
        }
        // Else the rule on test code would hold for want of recognising any.
        assertTrue(TEST_CODE.test(all.get(ArchitectureTest.class)), "this test class is recognised as test code");
    }

    @Test
    @DisplayName("(a) No package depends on itself through other packages")
    void noPackageCycles() {
        ArchRule rule = slices().matching("io.rota.(**)").namingSlices("$1")
                .should().beFreeOfCycles()
                .because("a cycle makes two packages one: neither can be read, tested or moved alone");
        rule.check(main);
    }

    @Test
    @DisplayName("(b) Main code depends on main code only, never on test classes")
    void mainCodeNeverDependsOnTestCode() {
        ArchRule rule = classes().that(MAIN_CODE)
                .should().onlyDependOnClassesThat(MAIN_CODE.or(resideOutsideOfPackage("io.rota..")))
                .because("test classes are not shipped: a shared fixture belongs in testkit, as main code");
        rule.check(main);
    }

    @Test
    @DisplayName("(b) Main code uses no test framework")
    void mainCodeUsesNoTestFramework() {
        ArchRule rule = noClasses().that(MAIN_CODE)
                .should().dependOnClassesThat().resideInAnyPackage("org.junit..", "org.opentest4j..", "com.tngtech.archunit..")
                .because("test frameworks are test-scoped; testkit fails with plain AssertionErrors");
        rule.check(main);
    }

    @Test
    @DisplayName("(c) Modules depend one way: rotactl, shedlock, spring -> recipes -> client -> proto; kv-server: server -> etcd, http -> runtime -> state -> raft-core; runtime -> raft-runtime -> raft-core, proto")
    void modulesDependOneWay() {
        ArchRule rule = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .ensureAllClassesAreContainedInArchitecture()
                .layer("proto").definedBy("io.rota.proto..")
                .layer("etcd-api").definedBy("io.rota.etcd..")
                .layer("raft-core").definedBy("io.rota.raft.core..")
                .layer("raft-runtime")
                .definedBy("io.rota.raft.node..", "io.rota.raft.storage..", "io.rota.raft.transport..")
                .layer("kv-state").definedBy(STATE)
                .layer("kv-runtime").definedBy(RUNTIME)
                .layer("kv-etcd").definedBy(ETCD)
                .layer("kv-http").definedBy(HTTP)
                .layer("kv-server").definedBy("io.rota.server")
                .layer("client").definedBy(SDK)
                .layer("recipes").definedBy("io.rota.client.recipes..")
                .layer("rotactl").definedBy("io.rota.client.cli..")
                .layer("testkit").definedBy("io.rota.testkit..")
                .layer("examples").definedBy("io.rota.examples..")
                .layer("chaos").definedBy("io.rota.chaos..")
                .layer("shedlock").definedBy("io.rota.shedlock..")
                .layer("spring").definedBy("io.rota.spring..")
                .whereLayer("proto").mayNotAccessAnyLayer()
                .whereLayer("etcd-api").mayNotAccessAnyLayer()
                // The pure algorithm knows nothing of Rota; its runtime knows the core and the wire (design.md HS1).
                .whereLayer("raft-core").mayNotAccessAnyLayer()
                .whereLayer("raft-runtime").mayOnlyAccessLayers("raft-core", "proto")
                // What every replica computes knows the pure core and the wire only (design.md HS11).
                .whereLayer("kv-state").mayOnlyAccessLayers("raft-core", "proto")
                .whereLayer("kv-runtime").mayOnlyAccessLayers("kv-state", "raft-runtime", "raft-core", "proto")
                .whereLayer("kv-etcd").mayOnlyAccessLayers("kv-runtime", "kv-state", "raft-runtime", "raft-core", "proto",
                        "etcd-api")
                .whereLayer("kv-http").mayOnlyAccessLayers("kv-runtime", "kv-state", "raft-runtime", "raft-core", "proto")
                .whereLayer("kv-server").mayOnlyAccessLayers("kv-etcd", "kv-http", "kv-runtime", "kv-state",
                        "raft-runtime", "raft-core", "proto", "etcd-api")
                .whereLayer("client").mayOnlyAccessLayers("proto")
                .whereLayer("recipes").mayOnlyAccessLayers("client")
                .whereLayer("rotactl").mayOnlyAccessLayers("recipes", "client")
                .whereLayer("testkit").mayNotAccessAnyLayer()
                .whereLayer("examples").mayOnlyAccessLayers("recipes", "client")
                .whereLayer("chaos").mayOnlyAccessLayers("testkit", "recipes", "client", "proto")
                // The adapters use the SDK's public API only: no wire types (the shaded jar's proto classes are
                // linked to a relocated protobuf), and neither knows the other.
                .whereLayer("shedlock").mayOnlyAccessLayers("recipes", "client")
                .whereLayer("spring").mayOnlyAccessLayers("recipes", "client")
                .because("each package belongs to one module, and a module uses only those below it (design.md H1)");
        rule.check(main);
    }

    @Test
    @DisplayName("(c) The SDK and the recipes know no framework: no Spring, ShedLock or Micrometer")
    void sdkKnowsNoFramework() {
        ArchRule rule = noClasses().that(SDK).or().resideInAPackage("io.rota.client.recipes..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "net.javacrumbs.shedlock..",
                        "io.micrometer..")
                .because("every application links the SDK; the frameworks reach it through the adapters (spring, "
                        + "shedlock) and the listener seams (ClientListener, JobListener), design.md F2");
        rule.check(main);
    }

    @Test
    @DisplayName("(c) The SDK and the recipes carry no gRPC: only the server speaks etcd's API")
    void sdkCarriesNoGrpc() {
        ArchRule rule = noClasses().that(SDK).or().resideInAnyPackage("io.rota.client.recipes..", "io.rota.proto..")
                .should().dependOnClassesThat().resideInAnyPackage("io.grpc..", "io.rota.etcd..")
                .because("gRPC is the server's etcd front door (design.md Y1); an application linking the SDK must"
                        + " not inherit it");
        rule.check(main);
    }

    @Test
    @DisplayName("(c) Libraries (proto, raft-core, raft-runtime, client, recipes, testkit) and the adapters (shedlock, spring) have no command line: no picocli")
    void librariesDoNotUsePicocli() {
        ArchRule rule = noClasses().that(SDK)
                .or().resideInAnyPackage("io.rota.client.recipes..", "io.rota.proto..", "io.rota.raft..", "io.rota.testkit..",
                        "io.rota.shedlock..", "io.rota.spring..")
                .should().dependOnClassesThat().resideInAPackage("picocli..")
                .because("picocli is for programs (rotactl, the server, the demo, chaos), not every SDK user");
        rule.check(main);
    }

    @Test
    @DisplayName("(d) The replicated state depends on nothing of the runtime, the doors or the server, nor on Netty, gRPC or RocksDB")
    void stateKnowsNoRuntime() {
        ArchRule rule = noClasses().that().resideInAnyPackage(STATE)
                .should().dependOnClassesThat().resideInAnyPackage(RUNTIME)
                .orShould().dependOnClassesThat().resideInAnyPackage(ETCD)
                .orShould().dependOnClassesThat().resideInAnyPackage(HTTP)
                .orShould().dependOnClassesThat().resideInAPackage("io.rota.server")
                .orShould().dependOnClassesThat().resideInAnyPackage("io.netty..", "io.grpc..", "org.rocksdb..")
                .because("every replica computes the state from the log alone; the member around it is another module,"
                        + " kv-server/state has no such dependency (design.md HS11)");
        rule.check(main);
    }

    /** A read of a clock: System.currentTimeMillis or nanoTime, or any java.time type's now(), called or referenced. */
    private static final DescribedPredicate<JavaAccess<?>> READS_A_CLOCK = describe(
            "a clock (System.currentTimeMillis, System.nanoTime, java.time's now())",
            a -> a.getTargetOwner().getName().equals(System.class.getName())
                    && (a.getName().equals("currentTimeMillis") || a.getName().equals("nanoTime"))
                    || a.getTargetOwner().getPackageName().equals("java.time") && a.getName().equals("now"));

    /** Threads, executors, timers, randomness, files and the network. */
    private static final DescribedPredicate<JavaClass> NOT_DETERMINISTIC = belongToAnyOf(Clock.class, Timer.class,
            Executors.class, File.class)
            .or(assignableTo(Thread.class)).or(assignableTo(Executor.class))
            .or(assignableTo(Random.class)).or(assignableTo(SecureRandom.class))
            .or(resideInAnyPackage("java.nio.file..", "java.net.."))
            .as("threads, executors, timers, randomness, files or the network");

    @Test
    @DisplayName("(d) The replicated state reads no clock and uses no threads, executors, randomness, files or network")
    void stateIsDeterministic() {
        ArchRule rule = noClasses().that().resideInAnyPackage(STATE)
                .should().accessTargetWhere(READS_A_CLOCK)
                .orShould().dependOnClassesThat(NOT_DETERMINISTIC)
                .because("apply must compute the same state on every member from the same entries: time is the log's"
                        + " (LogClock), anything member-local is passed in (design.md HS11, HS12)");
        rule.check(main);
    }

    @Test
    @DisplayName("(d) The etcd door and the HTTP port do not know each other")
    void doorsDoNotKnowEachOther() {
        ArchRule rule = CompositeArchRule
                .of(noClasses().that().resideInAnyPackage(ETCD).should().dependOnClassesThat().resideInAnyPackage(HTTP))
                .and(noClasses().that().resideInAnyPackage(HTTP).should().dependOnClassesThat().resideInAnyPackage(ETCD))
                .because("each is a door on the member runtime; the server assembles both (design.md HS15)");
        rule.check(main);
    }
}
