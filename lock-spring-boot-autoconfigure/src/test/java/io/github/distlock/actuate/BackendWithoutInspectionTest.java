package io.github.distlock.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;

/**
 * An application's own backend without the
 * {@link io.github.distlock.core.InspectableLockBackend} capability: the endpoint still
 * lists this instance's locks and says why it cannot show a key's state, and the health
 * check judges the watchdog alone. No store is involved: nothing is asked of this backend
 * but its key naming.
 */
class BackendWithoutInspectionTest {

    /**
     * Names keys and refuses everything else: the endpoint and the health check must not
     * call it.
     */
    private static final LockBackend UNINSPECTABLE = new LockBackend() {

        @Override
        public LockKey lockKey(String name) {
            return new LockKey(name, "custom:" + name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            throw new AssertionError("not expected");
        }

        @Override
        public boolean release(LockKey key, String token) {
            throw new AssertionError("not expected");
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            throw new AssertionError("not expected");
        }
    };

    @Test
    void theKeyStateSaysTheBackendCannotBeInspected() {
        LocksEndpoint.KeyState state = new LocksEndpoint(new ActiveLocks(), UNINSPECTABLE).lock("order:1");
        assertThat(state.redisKey()).isEqualTo("custom:order:1");
        assertThat(state.held()).isNull();
        assertThat(state.error()).contains("cannot be inspected").contains("InspectableLockBackend");
        assertThat(new LocksEndpoint(new ActiveLocks(), UNINSPECTABLE).locks().held()).isEmpty();
    }

    @Test
    void theHealthCheckSaysItCannotPingAndJudgesTheRestAlone() {
        LockBackendHealth.Check check = new LockBackendHealth(UNINSPECTABLE, null, Duration.ofSeconds(1)).check();
        assertThat(check.up()).isTrue();
        assertThat(check.details()).doesNotContainKey("nodes").containsKey("ping");
        assertThat((String) check.details().get("ping")).contains("not supported");
    }

}
