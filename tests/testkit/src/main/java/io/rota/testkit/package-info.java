/**
 * Test fixtures shared by the modules' tests and the chaos harness: {@link io.rota.testkit.ProcessCluster}
 * (real {@code rota-server.jar} processes), {@link io.rota.testkit.Ports} (free ports),
 * {@link io.rota.testkit.Await} (poll with a deadline, never sleep blindly) and
 * {@link io.rota.testkit.JsonText} (reads the JSON of the chaos history and of rotactl's {@code -w json}).
 * Main code of its own module, depending on the JDK only, so test code and tools use it as an ordinary
 * dependency instead of another module's test-jar.
 * {@link io.rota.testkit.RepositoryRoot}: the repository's root, for the tests that run its scripts or read its docs.
 */
package io.rota.testkit;
