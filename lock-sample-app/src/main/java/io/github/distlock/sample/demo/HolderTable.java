package io.github.distlock.sample.demo;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.ServiceLoader;

/**
 * The resource the paused-holder demo protects: one row that says who wrote it last, and
 * the fencing token of that write. Plain JDBC, so the same code runs in the demo's second
 * JVM.
 *
 * <pre>
 * CREATE TABLE &lt;table&gt; (id INT PRIMARY KEY, holder VARCHAR(64) NOT NULL, fence BIGINT NOT NULL)
 * </pre>
 *
 * @param url the JDBC URL (H2 or PostgreSQL)
 * @param user the database user
 * @param password the user's password, empty for none
 * @param table the table's name, unique per run so that runs never share a row
 */
record HolderTable(String url, String user, String password, String table) {

    /** Validates the table name: it is pasted into SQL. */
    HolderTable {
        if (!table.matches("[a-z][a-z0-9_]{0,62}")) {
            throw new IllegalArgumentException("Not a plain lower-case SQL name: " + table);
        }
    }

    /** Creates the table with its single row: nobody wrote it, fence 0. */
    void create() {
        update("CREATE TABLE " + table + " (id INT PRIMARY KEY, holder VARCHAR(64) NOT NULL, fence BIGINT NOT NULL)");
        update("INSERT INTO " + table + " (id, holder, fence) VALUES (1, 'nobody', 0)");
    }

    /** Puts the row back to "nobody, fence 0". */
    void reset() {
        update("UPDATE " + table + " SET holder = 'nobody', fence = 0 WHERE id = 1");
    }

    /** Drops the table. */
    void drop() {
        update("DROP TABLE " + table);
    }

    /**
     * Writes the row as {@code holder}.
     * @param fenced {@code true}: {@code UPDATE ... WHERE id = 1 AND fence < :token}, so
     * the database rejects a token older than the last one it saw; {@code false}: a plain
     * {@code UPDATE ... WHERE id = 1}
     * @return the rows updated: 1 if the write landed, 0 if the fence rejected it
     */
    int write(String holder, long token, boolean fenced) {
        String sql = fenced ? "UPDATE " + table + " SET holder = ?, fence = ? WHERE id = 1 AND fence < ?"
                : "UPDATE " + table + " SET holder = ?, fence = ? WHERE id = 1";
        try (Connection connection = connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, holder);
            statement.setLong(2, token);
            if (fenced) {
                statement.setLong(3, token);
            }
            return statement.executeUpdate();
        }
        catch (SQLException e) {
            throw new IllegalStateException("Could not write " + table + " at " + url + ": " + e.getMessage(), e);
        }
    }

    /** Who wrote the row last. */
    String holder() {
        try (Connection connection = connect();
                Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT holder FROM " + table + " WHERE id = 1")) {
            row.next();
            return row.getString(1);
        }
        catch (SQLException e) {
            throw new IllegalStateException("Could not read " + table + " at " + url + ": " + e.getMessage(), e);
        }
    }

    private void update(String sql) {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate(sql);
        }
        catch (SQLException e) {
            throw new IllegalStateException("Could not run '" + sql + "' at " + url + ": " + e.getMessage(), e);
        }
    }

    private Connection connect() throws SQLException {
        Properties credentials = new Properties();
        credentials.setProperty("user", user);
        credentials.setProperty("password", password);
        // Drivers are looked up through this class's loader rather than DriverManager,
        // which ignores drivers
        // that its caller's class loader cannot see: in the executable jar they sit in
        // Spring Boot's loader.
        for (Driver driver : ServiceLoader.load(Driver.class, HolderTable.class.getClassLoader())) {
            if (driver.acceptsURL(url)) {
                Connection connection = driver.connect(url, credentials);
                if (connection != null) {
                    return connection;
                }
            }
        }
        throw new SQLException("No JDBC driver on the classpath accepts " + url
                + "; the sample bundles H2 and PostgreSQL (jdbc:h2:..., jdbc:postgresql://...).");
    }
}
