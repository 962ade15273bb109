package io.github.distlock.autoconfigure;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Role;

/**
 * With {@code distributed-lock.enabled=false} nothing locks: no lock service, no
 * interceptor, and every {@code @DistributedLock} method runs without its lock. This logs
 * a WARN at startup naming each of those methods ({@link UnguardedMethodsWarning}), so
 * that turning the starter off is never silent.
 */
@AutoConfiguration
@Conditional(OnDistributedLockEnabledCondition.Disabled.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class DistributedLockDisabledAutoConfiguration {

    /**
     * Names the methods that run without a lock.
     * @param beanFactory where the methods are looked for
     * @return the warning, logged once every singleton exists
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static UnguardedMethodsWarning distributedLockUnguardedMethodsWarning(ConfigurableListableBeanFactory beanFactory) {
        return new UnguardedMethodsWarning(beanFactory);
    }

}
