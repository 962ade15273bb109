package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The lock with a Redis ACL user that may touch only the lock keys and the lock channel,
 * and run only the commands the lock needs: the "Minimal ACL" of docs/guide.md, which
 * this test keeps honest. It runs the whole lifecycle through
 * {@code spring.data.redis.username/password} with no command denied, and shows that each
 * permission is used: without it, something fails or Redis logs a denial.
 */
class RedisAclTest {

    /** The rules after {@code ACL SETUSER <user>}, as docs/guide.md shows them. */
    static final String MINIMAL_ACL = "on >%s resetkeys ~lock:* resetchannels &lock:* -@all "
            + "+set +get +eval +evalsha +pexpire +pttl +publish +subscribe +unsubscribe +ping "
            + "+time +del +zadd +zpopmin +zrem +hset +hget +hdel";

    private static final String PASSWORD = "acl-test-password";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension();

    private RedisTestServer redis;

    @BeforeEach
    void resetAclLog() {
        redis = redisExtension.server();
        redis.flushAll();
        // As on a fresh or restarted server: the first use of each script is an EVAL
        // (after NOSCRIPT).
        redis.command("SCRIPT", "FLUSH");
        redis.command("ACL", "LOG", "RESET");
    }

    @Test
    void theWholeLifecycleWorksForAUserLimitedToTheLockKeysChannelAndCommands() throws Exception {
        createUser("locker", rules(MINIMAL_ACL));

        try (LockApplication first = LockApplication.start(properties("locker"));
                LockApplication second = LockApplication.start(properties("locker"))) {
            LockLifecycle.run("acl", first.lockService(), second.lockService(), redis);

            assertThat((List<?>) redis.command("PUBSUB", "CHANNELS", "lock:*"))
                .as("the waiting instance subscribed to the release channel")
                .isNotEmpty();
        }
        assertThat(aclLog()).as("commands, keys or channels Redis denied (ACL LOG)").isEmpty();
    }

    /**
     * A missing key permission is a configuration error, not a held lock: it must not
     * look like contention.
     */
    @Test
    void aUserWithoutAccessToTheLockKeysGetsAnErrorNamingTheDenialNotAnEmptyResult() {
        createUser("elsewhere", rules(MINIMAL_ACL.replace("~lock:*", "~other:*")));

        try (LockApplication app = LockApplication.start(properties("elsewhere"))) {
            assertThatThrownBy(() -> app.lockService().tryLock(LockRequest.of("denied").withWaitTime(Duration.ZERO)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("NOPERM")
                .hasMessageContaining("~lock:*")
                .hasMessageContaining("#minimal-acl");
        }
        assertThat(redis.scan("lock:*")).isEmpty();
    }

    /**
     * Lock errors about a refused command send the reader to the guide's "Minimal ACL"
     * section ({@code docs/guide.md#minimal-acl}): that section must exist under that
     * anchor and show this test's line.
     */
    @Test
    void theMinimalAclThatLockErrorsPointAtIsTheGuidesSectionWithThisLine() throws Exception {
        assertThat(RedisErrorReply.MINIMAL_ACL).contains("\"Minimal ACL\" section of docs/guide.md (#minimal-acl)");
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("docs/guide.md"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("a directory with docs/guide.md above " + Path.of("").toAbsolutePath()).isNotNull();
        List<String> guide = Files.readAllLines(dir.resolve("docs/guide.md"));
        // GitHub's anchor for "## Minimal ACL" is #minimal-acl.
        int section = guide.indexOf("## Minimal ACL");
        assertThat(section).as("the heading '## Minimal ACL' in docs/guide.md").isNotNegative();
        int next = section + 1;
        while (next < guide.size() && !guide.get(next).startsWith("## ")) {
            next++;
        }
        assertThat(guide.subList(section, next)).contains("ACL SETUSER locker " + String.format(MINIMAL_ACL, "secret"));
    }

    static Stream<String> permissions() {
        return Arrays.stream(MINIMAL_ACL.split(" ")).filter(rule -> rule.startsWith("+"));
    }

    /**
     * Keeps the minimal ACL minimal: with any one permission taken away, the lifecycle
     * fails or Redis denies a command. One instance plays both roles, which keeps this
     * quick.
     */
    @ParameterizedTest(name = "without {0}")
    @MethodSource("permissions")
    void everyPermissionOfTheMinimalAclIsNeeded(String permission) {
        List<String> rules = new ArrayList<>(rules(MINIMAL_ACL));
        assertThat(rules.remove(permission)).isTrue();
        createUser("without", rules);
        Throwable failure = null;
        try (LockApplication app = LockApplication.start(properties("without"))) {
            LockLifecycle.run("acl", app.lockService(), app.lockService(), redis);
        }
        catch (Throwable ex) {
            failure = ex;
        }
        // Read after the application closed: some commands (UNSUBSCRIBE) run only at
        // shutdown.
        List<?> denials = aclLog();
        assertThat(failure != null || !denials.isEmpty())
            .as("without %s the lifecycle fails or Redis denies a command", permission)
            .isTrue();
    }

    private static List<String> rules(String acl) {
        return List.of(String.format(acl, PASSWORD).split(" "));
    }

    private void createUser(String user, List<String> rules) {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset"));
        command.addAll(rules);
        redis.command(command.toArray(String[]::new));
    }

    private String[] properties(String user) {
        return new String[] { "spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                "spring.data.redis.username=" + user, "spring.data.redis.password=" + PASSWORD };
    }

    private List<?> aclLog() {
        return (List<?>) redis.command("ACL", "LOG");
    }

}
