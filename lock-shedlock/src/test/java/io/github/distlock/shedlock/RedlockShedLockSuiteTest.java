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
 *
 * <p>
 * One of ShedLock's tests is replaced: {@code shouldNotBeAbleToExtendExpiredLock} takes a
 * lock with {@code lockAtMostFor} = 2 ms, which a Redlock refuses by design. A Redlock
 * lock is valid for its ttl less the vote's time less the clock-drift allowance (2 ms +
 * 1% of the ttl), so a 2 ms lease would be over before the job started, and the job would
 * run unguarded. The replacement checks that refusal, and then the test's own point (an
 * expired lock cannot be extended, and nothing is left in the store) with a 100 ms lease.
 * {@code shouldTimeout} runs as written, again only if its 50 ms lock ran out before the
 * vote's reply on a loaded machine.
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

    /**
     * {@code lockAtMostFor} = 50 ms: a Redlock vote on a loaded machine can use up most
     * of it (the ttl less the vote less the 2.5 ms drift allowance must stay positive),
     * and then the lock is rightly not handed out; run again only then.
     */
    @Test
    @Override
    public void shouldTimeout() {
        suite.retryWhenTheLeaseRanOutBeforeTheReply(LOCK_NAME1, () -> {
            try {
                super.shouldTimeout();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        });
    }

    @Test
    void runsOnTheShedLockVersionThisExecutionIsFor() {
        assertThat(ShedLockSuiteSupport.shedLockJar())
            .isEqualTo("shedlock-core-" + System.getProperty("shedlock.expected-version") + ".jar");
    }

}
