package io.github.distlock.shedlock;

import java.net.URISyntaxException;
import java.nio.file.Path;

import io.github.distlock.contract.ContractApplication;
import io.github.distlock.contract.ContractStore;
import net.javacrumbs.shedlock.core.LockProvider;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.Configuration;

/**
 * One store and one application instance per suite class, the instance configured through
 * properties only, as an application would be: the suite's provider is the
 * auto-configured bean.
 */
final class ShedLockSuiteSupport implements AutoCloseable {

    private final ContractStore store;

    private final ContractApplication application;

    ShedLockSuiteSupport(ContractStore store) {
        this.store = store;
        this.application = ContractApplication.start(store.applicationProperties(), ShedLockApplication.class);
    }

    LockProvider provider() {
        return this.application.bean(LockProvider.class);
    }

    boolean isHeld(String name) {
        return this.store.isHeld(name);
    }

    /**
     * Runs one of ShedLock's tests that takes a lock of a few milliseconds, again (up to
     * 5 times) only when it failed because that lock came back empty while the store
     * holds nothing: on a loaded machine the reply can take longer than such a lease, and
     * the lock service rightly does not hand out a lock whose lease ran out before the
     * caller could use it. Any other failure fails at once.
     */
    void retryWhenTheLeaseRanOutBeforeTheReply(String lockName, Runnable test) {
        for (int attempt = 1;; attempt++) {
            try {
                test.run();
                return;
            }
            catch (AssertionError ex) {
                boolean ranOut = String.valueOf(ex.getMessage())
                    .contains("Expecting Optional to contain a value but it was empty") && !isHeld(lockName);
                if (!ranOut || attempt == 5) {
                    throw ex;
                }
            }
        }
    }

    /**
     * The jar ShedLock's {@code LockProvider} was loaded from: which version this run
     * tests.
     */
    static String shedLockJar() {
        try {
            return Path.of(LockProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .getFileName()
                .toString();
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        this.application.close();
        this.store.close();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(ShedLockAutoConfiguration.class)
    static class ShedLockApplication {

    }

}
