package io.github.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;

import io.github.distlock.LockBackendException;

import io.github.distlock.contract.LockKeyspace;
import io.github.distlock.contract.RedisContractStore;
import io.github.distlock.contract.RedlockRedis;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider suite (shedlock-test-support 6.6.1: every test of
 * {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest}) against the auto-configured
 * provider on a Redlock over three real {@code redis-server} masters
 * ({@code distributed-lock.redlock.nodes}). Surefire runs it twice: on ShedLock 7 and on
 * shedlock-core 6.6.1 (see this module's pom).
 */
class RedlockShedLockSuiteTest extends AbstractExtensibleLockProviderIntegrationTest {

    private static ShedLockSuiteSupport suite;

    @BeforeAll
    static void start() {
        suite = new ShedLockSuiteSupport(new RedisContractStore(RedlockRedis.start(3), LockKeyspace.SINGLE_REDIS));
    }

    @AfterAll
    static void stop() {
        if (suite != null) {
            suite.close();
        }
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return (ExtensibleLockProvider) suite.provider();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(suite.isHeld(lockName)).as("lock %s held in the store", lockName).isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(suite.isHeld(lockName)).as("lock %s held in the store", lockName).isTrue();
    }

    @Test
    @Override
    public void shouldNotBeAbleToExtendExpiredLock() {
        assertThatThrownBy(() -> getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofMillis(2), Duration.ZERO)))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("used up the whole ttl of 2 ms")
            .hasMessageContaining("Raise the ttl");
        assertUnlocked(LOCK_NAME1);

        Optional<SimpleLock> lock = getLockProvider()
            .lock(lockConfig(LOCK_NAME1, Duration.ofMillis(100), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        sleepFor(Duration.ofMillis(200));
        assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void runsOnTheShedLockVersionThisExecutionIsFor() {
        assertThat(ShedLockSuiteSupport.shedLockJar())
            .isEqualTo("shedlock-core-" + System.getProperty("shedlock.expected-version") + ".jar");
    }

}
