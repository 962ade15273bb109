package io.github.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.LockBackend;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * The in-memory backend as a store: every application instance of the class gets the same
 * {@link InMemoryLockBackend} bean, as instances of an application share one Redis, and
 * the side door is the backend's own inspection.
 */
public final class InMemoryContractStore implements ContractStore {

    /**
     * The store of the running contract class. Static, because the application instances
     * are built from configuration classes; a test JVM runs one contract class at a time.
     */
    private static volatile InMemoryLockBackend current;

    private final InMemoryLockBackend backend = new InMemoryLockBackend();

    private InMemoryContractStore() {
        current = backend;
    }

    /** A new, empty store, used by the application instances started from now on. */
    public static InMemoryContractStore start() {
        return new InMemoryContractStore();
    }

    @Override
    public List<String> applicationProperties() {
        return List.of();
    }

    @Override
    public Class<?>[] applicationSources() {
        return new Class<?>[] { SharedBackend.class };
    }

    @Override
    public boolean isHeld(String name) {
        return state(name).held();
    }

    @Override
    public long leaseLeftMillis(String name) {
        LockState state = state(name);
        return state.held() ? state.leaseLeftMillis() : -2;
    }

    @Override
    public void takeAway(String name) {
        assertThat(backend.forceRelease(name)).as("took %s from its holder", name).isTrue();
    }

    @Override
    public long queueLength(String name) {
        return state(name).queueLength();
    }

    @Override
    public Set<String> leftovers(String name) {
        LockState state = state(name);
        Set<String> left = new HashSet<>();
        if (state.held()) {
            left.add("lock " + name);
        }
        if (state.queueLength() > 0) {
            left.add(state.queueLength() + " waiter(s) of " + name);
        }
        return left;
    }

    /**
     * The backend keeps no counter for a free lock (its tokens follow one counter for all
     * locks): nothing to drop.
     */
    @Override
    public void evictFencingCounter(String name) {
        assertThat(isHeld(name)).as("%s is free", name).isFalse();
    }

    private LockState state(String name) {
        return backend.inspect(backend.lockKey(name));
    }

    @Override
    public void reset() {
        backend.clear();
    }

    @Override
    public void close() {
        current = null;
    }

    @Override
    public String toString() {
        return "in-memory store";
    }

    /** The store's backend as the application's {@link LockBackend} bean. */
    @Configuration(proxyBeanMethods = false)
    public static class SharedBackend {

        @Bean
        InMemoryLockBackend lockBackend() {
            InMemoryLockBackend backend = current;
            if (backend == null) {
                throw new IllegalStateException("No InMemoryContractStore was started");
            }
            return backend;
        }

    }

}
