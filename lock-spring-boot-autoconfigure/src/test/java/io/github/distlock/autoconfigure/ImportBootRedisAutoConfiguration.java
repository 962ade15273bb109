package io.github.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Imports Spring Boot's Redis auto-configuration, of Boot 3 or Boot 4, where an
 * annotation needs it (an annotation cannot name a class that is absent on one of them).
 * The names are in
 * {@code META-INF/spring/io.github.distlock.autoconfigure.ImportBootRedisAutoConfiguration.imports},
 * each {@code optional:}, so the one that is missing is skipped:
 *
 * <pre>{@code
 * &#64;Configuration(proxyBeanMethods = false)
 * &#64;ImportBootRedisAutoConfiguration
 * &#64;ImportAutoConfiguration(DistributedLockAutoConfiguration.class)
 * static class Application { }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ImportAutoConfiguration
public @interface ImportBootRedisAutoConfiguration {

}
