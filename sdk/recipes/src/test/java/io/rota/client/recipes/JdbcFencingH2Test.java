package io.rota.client.recipes;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;

/** {@link JdbcFencing} against H2 (in memory, its default MVStore engine with row locks). */
class JdbcFencingH2Test extends JdbcFencingDatabaseTest {

    /** One database per test instance; kept while a connection is open (DB_CLOSE_DELAY=-1 keeps it for the test). */
    private final String url = "jdbc:h2:mem:fencing-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";

    @Override
    Connection connect() throws SQLException {
        return DriverManager.getConnection(url, "sa", "");
    }

    @Override
    String lockWaitersQuery() {
        return "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL";
    }
}
