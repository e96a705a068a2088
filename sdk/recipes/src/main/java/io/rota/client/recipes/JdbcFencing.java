package io.rota.client.recipes;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Fencing at a SQL database (only {@code java.sql}; bring your own driver). Each protected row carries the
 * highest fencing token that wrote it; an update applies only if its token is at least that one, in the
 * same statement — the database checks and writes atomically:
 *
 * <pre>{@code
 * UPDATE accounts SET balance = ?, fence_token = ? WHERE id = ? AND fence_token <= ?
 * }</pre>
 * Create rows with {@code fence_token = 0}. An update count of 0 means a newer holder wrote the row (or the
 * row is missing): the caller lost the lock and must stop.
 *
 * <pre>{@code
 * JdbcFencing accounts = JdbcFencing.of("accounts", "id", "fence_token", List.of("balance"));
 * boolean applied = accounts.update(connection, held.fencingToken(), 42L, List.of(100));
 * }</pre>
 *
 * @see FenceGuard
 */
public final class JdbcFencing {

    /** Plain SQL identifiers only: the names are put into the statement text. */
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final String sql;
    private final int columns;

    private JdbcFencing(String sql, int columns) {
        this.sql = sql;
        this.columns = columns;
    }

    /**
     * A fenced update of {@code table}.
     *
     * @param table       the table
     * @param idColumn    the key column of the row
     * @param fenceColumn the column holding the row's highest token (e.g. {@code fence_token})
     * @param setColumns  the columns the update sets, in the order their values are given
     * @return the helper
     * @throws IllegalArgumentException if a name is not a plain SQL identifier or no column is set
     */
    public static JdbcFencing of(String table, String idColumn, String fenceColumn, List<String> setColumns) {
        if (setColumns.isEmpty()) {
            throw new IllegalArgumentException("a fenced update must set at least one column");
        }
        StringBuilder b = new StringBuilder("UPDATE ").append(identifier(table)).append(" SET ");
        for (String c : setColumns) {
            b.append(identifier(c)).append(" = ?, ");
        }
        String fence = identifier(fenceColumn);
        b.append(fence).append(" = ? WHERE ").append(identifier(idColumn)).append(" = ? AND ")
                .append(fence).append(" <= ?");
        return new JdbcFencing(b.toString(), setColumns.size());
    }

    /**
     * The statement: {@code UPDATE t SET c1 = ?, ..., fence = ? WHERE id = ? AND fence <= ?}.
     *
     * @return the SQL text
     */
    public String sql() {
        return sql;
    }

    /**
     * Runs the fenced update.
     *
     * @param connection a JDBC connection (its transaction settings are the caller's)
     * @param token      the writer's fencing token
     * @param id         the row's key
     * @param values     the new values of the set columns, in order
     * @return true if the row was updated; false if a higher token already wrote it (or it does not exist)
     * @throws SQLException from the driver
     */
    public boolean update(Connection connection, long token, Object id, List<?> values) throws SQLException {
        if (values.size() != columns) {
            throw new IllegalArgumentException("expected " + columns + " values, got " + values.size());
        }
        try (PreparedStatement s = connection.prepareStatement(sql)) {
            int i = 1;
            for (Object v : values) {
                s.setObject(i++, v);
            }
            s.setLong(i++, token);
            s.setObject(i++, id);
            s.setLong(i, token);
            return s.executeUpdate() == 1;
        }
    }

    private static String identifier(String name) {
        if (!IDENTIFIER.matcher(Objects.requireNonNull(name, "name")).matches()) {
            throw new IllegalArgumentException("not a plain SQL identifier: '" + name + "'");
        }
        return name;
    }
}
