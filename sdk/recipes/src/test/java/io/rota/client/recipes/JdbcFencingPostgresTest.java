package io.rota.client.recipes;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * {@link JdbcFencing} against a real PostgreSQL server (READ COMMITTED: a waiting UPDATE re-checks its WHERE
 * clause on the row version the other transaction committed). The server is started by the test
 * ({@link PostgresForTests}); where none can run the class is skipped with the reason.
 */
class JdbcFencingPostgresTest extends JdbcFencingDatabaseTest {

    private static PostgresForTests postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresForTests.start();
        Assumptions.assumeTrue(postgres != null, "SKIPPED: no PostgreSQL could be started for the JdbcFencing tests: "
                + PostgresForTests.whyNot);
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    Connection connect() throws SQLException {
        return postgres.connect();
    }

    @Override
    String lockWaitersQuery() {
        return "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    }
}
