package io.github.distlock.autoconfigure;

import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

import io.github.distlock.aop.LockedMethods;

/**
 * With {@code distributed-lock.enabled=false}, the one way to run
 * {@code @DistributedLock} methods without their lock on purpose, says so once at
 * startup, naming every such method, so that a copied test setting cannot turn the locks
 * off in production unnoticed.
 */
class UnguardedMethodsWarning implements SmartInitializingSingleton {

    private static final Log logger = LogFactory.getLog(UnguardedMethodsWarning.class);

    private final ConfigurableListableBeanFactory beanFactory;

    UnguardedMethodsWarning(ConfigurableListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<String> methods = LockedMethods.of(beanFactory);
        if (!methods.isEmpty()) {
            logger.warn(OnDistributedLockEnabledCondition.ENABLED + "=false: " + methods.size()
                    + " @DistributedLock method(s) run WITHOUT a lock, on every instance at once: "
                    + String.join(", ", methods) + ". Remove the property (or set it to true) to lock them.");
        }
    }

}
