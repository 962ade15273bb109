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
