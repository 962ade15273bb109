package io.github.distlock.shedlock;

import io.github.distlock.LockService;
import net.javacrumbs.shedlock.core.LockProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Declares ShedLock's {@link LockProvider} on the application's {@link LockService} when
 * ShedLock is on the classpath, unless the application declares its own provider.
 * {@code @EnableSchedulerLock} stays the application's to add, as with any provider.
 */
@AutoConfiguration(afterName = "io.github.distlock.autoconfigure.DistributedLockAutoConfiguration")
@ConditionalOnClass(LockProvider.class)
@ConditionalOnBean(LockService.class)
public class ShedLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    LockServiceLockProvider lockServiceLockProvider(LockService lockService) {
        return new LockServiceLockProvider(lockService);
    }

}
