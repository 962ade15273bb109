package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The paused-holder demo's claims, with a real second JVM stopped by SIGSTOP: without
 * fencing the stale write lands, with the database checking the token it is rejected. On
 * H2, and on the PostgreSQL at 127.0.0.1:5432 (CI machines have one, trust auth).
 */
class PausedHolderDemoTest {

    private static final String POSTGRES_HOST = "127.0.0.1";

    private static final int POSTGRES_PORT = 5432;

    private static final String POSTGRES_USER = System.getProperty("sample.test.postgres.user", "postgres");

    private static final String POSTGRES_PASSWORD = System.getProperty("sample.test.postgres.password", "");

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void staleWriteLandsWithoutFencingAndIsRejectedWithFencingOnH2() {
        PausedHolderDemo.Report report = PausedHolderDemo.run(null, "", "", redisArgs());

        assertFacts(report);
    }

    @Test
    void staleWriteLandsWithoutFencingAndIsRejectedWithFencingOnPostgres() throws SQLException {
        Assumptions.assumeTrue(answers(POSTGRES_HOST, POSTGRES_PORT), "No PostgreSQL answers at " + POSTGRES_HOST + ":"
                + POSTGRES_PORT + "; this test needs one (user " + POSTGRES_USER + ", trust auth), as on CI machines");
        String schema = "paused_holder_test_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        String server = "jdbc:postgresql://" + POSTGRES_HOST + ":" + POSTGRES_PORT + "/postgres";
        execute(server, "CREATE SCHEMA " + schema);
        try {
            PausedHolderDemo.Report report = PausedHolderDemo.run(server + "?currentSchema=" + schema, POSTGRES_USER,
                    POSTGRES_PASSWORD, redisArgs());

            assertFacts(report);
            assertThat(report.database()).startsWith("jdbc:postgresql:");
            try (Connection connection = DriverManager.getConnection(server, POSTGRES_USER, POSTGRES_PASSWORD);
                    Statement statement = connection.createStatement();
                    ResultSet tables = statement.executeQuery(
                            "SELECT count(*) FROM information_schema.tables WHERE table_schema = '" + schema + "'")) {
                tables.next();
                assertThat(tables.getInt(1)).as("the demo drops its table").isZero();
            }
        }
        finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static void assertFacts(PausedHolderDemo.Report report) {
        System.out.println(report.table());
        PausedHolderDemo.Row plain = report.plain();
        PausedHolderDemo.Row fenced = report.fenced();

        // A's lease ran out while it was stopped, and B, taking over, got a newer token
        // each time.
        for (PausedHolderDemo.Row row : new PausedHolderDemo.Row[] { plain, fenced }) {
            assertThat(row.paused()).isPositive();
            assertThat(row.lockToWrite()).isGreaterThanOrEqualTo(PausedHolderDemo.HOLDER_TTL);
            assertThat(row.tokenB()).isGreaterThan(row.tokenA());
            assertThat(row.rowsB()).as("B's write").isEqualTo(1);
            assertThat(row.heldA()).as("A's handle knows its fixed lease ran out").isFalse();
        }
        assertThat(fenced.tokenA()).isGreaterThan(plain.tokenB());

        assertThat(plain.rowsA()).as("the stale write without fencing").isEqualTo(1);
        assertThat(plain.staleWriteLanded()).isTrue();
        assertThat(plain.finalHolder()).isEqualTo("instance-a");

        assertThat(fenced.rowsA()).as("the stale write with the fence checked").isZero();
        assertThat(fenced.staleWriteLanded()).isFalse();
        assertThat(fenced.finalHolder()).isEqualTo("instance-b");

        assertThat(report.table().toString()).contains("| LANDED ", "| rejected ");
    }

    private static String[] redisArgs() {
        return new String[] { "--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port() };
    }

    private static void execute(String url, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url, POSTGRES_USER, POSTGRES_PASSWORD);
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        }
        catch (IOException e) {
            return false;
        }
    }

}
