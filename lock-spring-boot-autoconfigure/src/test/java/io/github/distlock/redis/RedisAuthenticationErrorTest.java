package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.actuate.LockBackendHealth;
import io.github.distlock.core.LockBackend;
import io.github.distlock.redlock.RedlockQuorumException;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A Redis that refuses the application's credentials, or its ACL user's commands, is
 * reported with the server's own reply ({@code WRONGPASS}, {@code NOAUTH},
 * {@code NOPERM}) and the setting to fix, never as a bare "Unable to connect": in the
 * lock's exception and in the health detail, on Lettuce, on Jedis and over Redlock nodes.
 * Against real servers started with {@code requirepass}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisAuthenticationErrorTest {

    private static final String PASSWORD = "the-right-password";

    /** The first server is the standalone Redis; all three are the Redlock nodes. */
    @RegisterExtension
    static final RedisServerExtension redisExtension = RedisServerExtension.masters(3,
            RedisTestServer.builder().password(PASSWORD));

    private RedisTestServer redis;

    @BeforeEach
    void createAclUsers() {
        redis = redisExtension.server();
        redis.command("ACL", "SETUSER", "no-set", "reset", "on", ">" + PASSWORD, "~*", "&*", "+@all", "-set");
        redis.command("ACL", "SETUSER", "no-time", "reset", "on", ">" + PASSWORD, "~*", "&*", "+@all", "-time");
        redis.command("ACL", "SETUSER", "no-pexpire", "reset", "on", ">" + PASSWORD, "~*", "&*", "+@all", "-pexpire");
    }

    private LockApplication start(String driver, String... credentials) {
        String[] properties = new String[credentials.length + 4];
        properties[0] = "spring.data.redis.client-type=" + driver;
        properties[1] = "spring.data.redis.host=" + redis.host();
        properties[2] = "spring.data.redis.port=" + redis.port();
        properties[3] = "distributed-lock.operation-timeout=10s";
        System.arraycopy(credentials, 0, properties, 4, credentials.length);
        return LockApplication.start(properties);
    }

    private static Throwable tryLock(LockApplication app, LockRequest request) {
        return catchThrowable(() -> app.lockService().tryLock(request.withWaitTime(Duration.ZERO)));
    }

    /** The health detail's error for each node, as {@code /actuator/health} shows it. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> healthErrors(LockApplication app) {
        LockBackendHealth.Check check = new LockBackendHealth(app.bean(LockBackend.class), null, Duration.ofSeconds(10))
            .check();
        assertThat(check.up()).isFalse();
        Map<String, Map<String, Object>> nodes = (Map<String, Map<String, Object>>) check.details().get("nodes");
        return nodes.entrySet()
            .stream()
            .collect(Collectors.toMap(Map.Entry::getKey, node -> String.valueOf(node.getValue().get("error"))));
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aWrongPasswordIsReportedWithRedissWrongpassAndThePropertiesToCheck(String driver) {
        try (LockApplication app = start(driver, "spring.data.redis.password=not-the-password")) {
            assertThat(tryLock(app, LockRequest.of("order:1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("WRONGPASS invalid username-password pair")
                .hasMessageContaining("spring.data.redis.password")
                .hasMessageContaining("spring.data.redis.username")
                .hasMessageNotContaining("Unable to connect");

            assertThat(healthErrors(app)).containsOnlyKeys(redis.host() + ":" + redis.port())
                .allSatisfy((node, error) -> assertThat(error).startsWith("Redis refused the user name or password")
                    .contains("WRONGPASS")
                    .contains("spring.data.redis.password")
                    .doesNotContain("lock '"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aMissingPasswordIsReportedWithRedissNoauthAndThePropertyToSet(String driver) {
        try (LockApplication app = start(driver)) {
            assertThat(tryLock(app, LockRequest.of("order:1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("NOAUTH")
                .hasMessageContaining("Redis requires a password, and none was sent")
                .hasMessageContaining("Set spring.data.redis.password")
                .hasMessageNotContaining("Unable to connect");

            assertThat(healthErrors(app).values()).singleElement()
                .asString()
                .contains("NOAUTH")
                .contains("spring.data.redis.password");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aCommandTheAclRefusesIsNamedWithTheGrantAndTheMinimalAcl(String driver) {
        try (LockApplication app = start(driver, "spring.data.redis.username=no-set",
                "spring.data.redis.password=" + PASSWORD)) {
            assertThat(tryLock(app, LockRequest.of("order:1"))).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("NOPERM")
                .hasMessageContaining("may not run 'set'")
                .hasMessageContaining("ACL SETUSER <user> +set")
                .hasMessageContaining("docs/guide.md (#minimal-acl)");
        }
    }

    /**
     * Redis 7.0 does not name a command that a script may not run ("can't run this
     * command or subcommand script: <sha>, on @user_script:<line>"): the message reads it
     * from our script.
     */
    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aCommandTheAclRefusesInsideALockScriptIsNamedAlthoughRedisDoesNotNameIt(String driver) {
        try (LockApplication app = start(driver, "spring.data.redis.username=no-time",
                "spring.data.redis.password=" + PASSWORD)) {
            // A fencing token is drawn in acquire.lua with the server's TIME.
            assertThat(tryLock(app, LockRequest.of("order:1").withFencingToken()))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("may not run 'time'")
                .hasMessageContaining("in acquire.lua, line")
                .hasMessageContaining("ACL SETUSER <user> +time")
                .hasMessageContaining("docs/guide.md (#minimal-acl)");
        }
    }

    /**
     * A renewal has no caller to throw to: without a WARN, the leases it loses would read
     * as "Redis could not be reached" while Redis answers every time.
     */
    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aRenewalTheAclRefusesIsLoggedNamingTheCommand(String driver, CapturedOutput output) {
        try (LockApplication app = start(driver, "spring.data.redis.username=no-pexpire",
                "spring.data.redis.password=" + PASSWORD)) {
            LockHandle held = app.lockService()
                .tryLock(LockRequest.of("order:1")
                    .withTtl(Duration.ofSeconds(3))
                    .withWaitTime(Duration.ZERO)
                    .withWatchdog(true))
                .orElseThrow();
            try {
                await().atMost(Duration.ofSeconds(30))
                    .until(() -> output.getOut()
                        .contains("Redis refused to renew leases, so they will be lost although Redis answers"));
                assertThat(output.getOut()).contains("may not run 'pexpire', which the lock needs (in renew.lua, line")
                    .contains("ACL SETUSER <user> +pexpire");
            }
            finally {
                held.release();
            }
        }
    }

    @Test
    void redlockNodesThatRefuseThePasswordAreReportedWithWrongpassAndTheirUris() {
        String nodes = redisExtension.servers()
            .stream()
            .map(node -> "redis://:not-the-password@" + node.host() + ":" + node.port())
            .collect(Collectors.joining(","));
        try (LockApplication app = LockApplication.start("distributed-lock.redlock.nodes=" + nodes,
                "distributed-lock.redlock.restart-protection=false", "distributed-lock.redlock.node-timeout=10s")) {
            String first = redis.host() + ":" + redis.port();
            assertThat(tryLock(app, LockRequest.of("order:1"))).isInstanceOf(RedlockQuorumException.class)
                .hasMessageContaining("WRONGPASS")
                .hasMessageContaining(
                        "the user and password in the URI of " + first + " in distributed-lock.redlock.nodes")
                .hasMessageNotContaining("Unable to connect");

            assertThat(healthErrors(app)).hasSize(3)
                .allSatisfy((node, error) -> assertThat(error).contains("WRONGPASS")
                    .contains("the URI of " + node + " in distributed-lock.redlock.nodes"));
        }
    }

    @Test
    void aUserThatMayNotTouchTheLockKeysIsToldTheKeyPatternToAllow() {
        redis.command("ACL", "SETUSER", "other-keys", "reset", "on", ">" + PASSWORD, "~other:*", "&*", "+@all");
        try (LockApplication app = start("lettuce", "spring.data.redis.username=other-keys",
                "spring.data.redis.password=" + PASSWORD)) {
            assertThatThrownBy(() -> app.lockService().tryLock(LockRequest.of("order:1").withWaitTime(Duration.ZERO)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("NOPERM")
                .hasMessageContaining("may not access the lock's keys")
                .hasMessageContaining("distributed-lock.key-prefix, for example ~lock:*")
                .hasMessageContaining("docs/guide.md (#minimal-acl)");
        }
    }

}
