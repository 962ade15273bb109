package io.github.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.distlock.contract.LockKeyspace;
import io.github.distlock.contract.RedisContractStore;
import io.github.distlock.contract.StandaloneRedis;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider suite (shedlock-test-support 6.6.1: every test of
 * {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest}) against the auto-configured
 * provider on one real {@code redis-server}. Surefire runs it twice: on ShedLock 7 and on
 * shedlock-core 6.6.1 (see this module's pom).
 */
class RedisShedLockSuiteTest extends AbstractExtensibleLockProviderIntegrationTest {

    private static ShedLockSuiteSupport suite;

    @BeforeAll
    static void start() {
        suite = new ShedLockSuiteSupport(new RedisContractStore(StandaloneRedis.start(), LockKeyspace.SINGLE_REDIS));
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
        suite.retryWhenTheLeaseRanOutBeforeTheReply(LOCK_NAME1, super::shouldNotBeAbleToExtendExpiredLock);
    }

    @Test
    void runsOnTheShedLockVersionThisExecutionIsFor() {
        assertThat(ShedLockSuiteSupport.shedLockJar())
            .isEqualTo("shedlock-core-" + System.getProperty("shedlock.expected-version") + ".jar");
    }

}
