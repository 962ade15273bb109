package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A single Redis node whose wall clock jumps (NTP step, VM resume): Redis expires keys by
 * its wall clock, the holder's JVM counts its lease on its own monotonic clock, and the
 * two disagree. A forward jump longer than what is left of the lease expires it early and
 * lets a second holder in while the first still believes it holds; only the fencing check
 * at the resource stops the first one's late write. A backward jump stretches the lease
 * in real time and lets nobody in. The server runs under libfaketime
 * ({@link RedisTestServer.Builder#withFakeClock()}).
 */
class ClockJumpTest {

    private static final Duration TTL = Duration.ofSeconds(15);

    private RedisTestServer redis;

    private LockServiceConnection instanceA;

    private LockServiceConnection instanceB;

    private FencedRow account;

    @BeforeEach
    void start() throws SQLException {
        redis = RedisTestServer.builder().withFakeClock().start();
        // Generous operation timeouts: nothing here is timed, and a loaded machine may be
        // slow.
        instanceA = new LockServiceConnection(redis, Duration.ofSeconds(15), true);
        instanceB = new LockServiceConnection(redis, Duration.ofSeconds(15), true);
        account = new FencedRow();
    }

    @AfterEach
    void stop() throws Exception {
        instanceA.close();
        instanceB.close();
        account.close();
        redis.close();
    }

    @Test
    void aForwardJumpPastTheLeaseLetsASecondClientInWhileTheFirstStillHoldsAndFencingRefusesTheStaleWrite()
            throws SQLException {
        // The watchdog is on, as by default: it renews every ttl/3, and a jump between
        // two renewals beats it.
        LockHandle first = instanceA.service.lock(request());
        assertThat(account.update("A", first.fencingToken())).isTrue();

        redis.jumpClock(TTL.plusSeconds(1));

        Optional<LockHandle> second = instanceB.service.tryLock(request());
        assertThat(second).as("the lease expired on Redis's clock, so a second client acquires").isPresent();
        assertThat(first.isHeld()).as("the first client still believes it holds").isTrue();
        assertThat(second.get().isHeld()).isTrue();

        long secondToken = second.get().fencingToken();
        assertThat(secondToken).isGreaterThan(first.fencingToken());
        assertThat(account.update("B", secondToken)).isTrue();
        assertThat(account.update("A, late", first.fencingToken())).as("the first holder's stale write").isFalse();
        assertThat(account.holder()).isEqualTo("B");

        // The first client learns it at the watchdog's next renewal, which finds the key
        // taken.
        await().atMost(TTL.multipliedBy(2)).until(first::isLost);
        assertThat(first.isHeld()).isFalse();
        assertThat(second.get().isHeld()).isTrue();
        assertThat(second.get().release()).isTrue();
    }

    @Test
    void withoutAJumpTheSecondClientIsKeptOut() {
        LockHandle first = instanceA.service.lock(request());

        assertThat(instanceB.service.tryLock(request())).isEmpty();
        assertThat(first.release()).isTrue();
    }

    @Test
    void aBackwardJumpStretchesTheLeaseInRealTimeButLetsNoSecondClientIn() throws SQLException {
        LockHandle first = instanceA.service.lock(request().withWatchdog(false));
        long firstToken = first.fencingToken();

        redis.jumpClock(Duration.ofSeconds(-60));

        // Redis now holds the key some 60 s longer than the ttl; the JVM still counts
        // only the ttl, so it never
        // believes it holds longer than Redis does. Had the holder died, the lock would
        // stay taken that much longer.
        assertThat(redis.pttl("lock:{account:7}")).isGreaterThan(Duration.ofSeconds(60).toMillis());
        assertThat(instanceB.service.tryLock(request())).isEmpty();
        assertThat(first.isHeld()).isTrue();

        // A release still frees it at once, and tokens keep increasing: the counter, not
        // the clock, orders them.
        assertThat(first.release()).isTrue();
        LockHandle second = instanceB.service.tryLock(request()).orElseThrow();
        assertThat(second.fencingToken()).isGreaterThan(firstToken);
        assertThat(account.update("B", second.fencingToken())).isTrue();
        assertThat(account.update("A, late", firstToken)).isFalse();
        assertThat(second.release()).isTrue();
    }

    private static LockRequest request() {
        return LockRequest.of("account:7").withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken();
    }

    /**
     * One row of a real (in-memory H2) table, written only with a newer fencing token, as
     * the guide shows.
     */
    private static final class FencedRow implements AutoCloseable {

        private final Connection connection;

        FencedRow() throws SQLException {
            connection = DriverManager.getConnection("jdbc:h2:mem:clock-jump-" + UUID.randomUUID());
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE account (id INT PRIMARY KEY, holder VARCHAR(20), fence BIGINT)");
                statement.execute("INSERT INTO account VALUES (1, NULL, 0)");
            }
        }

        /** {@code UPDATE ... WHERE fence < :token}: true if the write was accepted. */
        boolean update(String holder, long token) throws SQLException {
            try (PreparedStatement update = connection
                .prepareStatement("UPDATE account SET holder = ?, fence = ? WHERE id = 1 AND fence < ?")) {
                update.setString(1, holder);
                update.setLong(2, token);
                update.setLong(3, token);
                return update.executeUpdate() == 1;
            }
        }

        String holder() throws SQLException {
            try (Statement statement = connection.createStatement();
                    ResultSet row = statement.executeQuery("SELECT holder FROM account WHERE id = 1")) {
                row.next();
                return row.getString(1);
            }
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }

    }

}
