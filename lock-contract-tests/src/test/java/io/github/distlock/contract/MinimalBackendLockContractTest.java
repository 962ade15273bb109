package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;

/**
 * The contract on a backend that has none of the optional capabilities: only
 * {@link LockBackend}'s four operations, as a custom backend declared by an application
 * would. The lock service must then wait by polling and refuse fencing tokens, and
 * everything else the contract promises must hold all the same. It runs on the Lettuce
 * backend with its wait queue and fencing tokens hidden, so the locks are real Redis
 * locks.
 */
class MinimalBackendLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return StandaloneRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.FAULT_PROXY, Capability.CLIENT_RESENDS);
    }

    @Override
    protected Class<?>[] applicationSources() {
        return new Class<?>[] { MinimalBackendConfiguration.class };
    }

    @Override
    protected List<String> applicationProperties() {
        return List.of();
    }

    /**
     * Declares the application's own backend, so the auto-configuration wires no Redis
     * backend.
     */
    @Configuration(proxyBeanMethods = false)
    static class MinimalBackendConfiguration {

        @Bean
        MinimalBackend minimalLockBackend(RedisConnectionFactory connectionFactory) {
            return new MinimalBackend(new LettuceLockBackend(connectionFactory, java.time.Duration.ofSeconds(2),
                    "lock:", HandOverSubscriber.handOverChannel("lock:")));
        }

    }

    /**
     * Only the base interface of a real backend: an {@code instanceof} check for a
     * capability fails. Closes the real backend before the connection factory stops, as
     * the real one does.
     */
    static final class MinimalBackend implements LockBackend, SmartLifecycle {

        private final LettuceLockBackend delegate;

        MinimalBackend(LettuceLockBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public LockKey lockKey(String name) {
            return delegate.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            return delegate.tryAcquire(key, token, ttlMillis);
        }

        @Override
        public boolean release(LockKey key, String token) {
            return delegate.release(key, token);
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            delegate.renew(renewals, outcomes);
        }

        @Override
        public void start() {
            delegate.start();
        }

        @Override
        public void stop() {
            delegate.stop();
        }

        @Override
        public boolean isRunning() {
            return delegate.isRunning();
        }

        @Override
        public int getPhase() {
            return delegate.getPhase();
        }

    }

}
