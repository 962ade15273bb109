package io.github.distlock.contract;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Imports Spring Boot's Redis auto-configuration of Boot 4 or Boot 3, whichever the class
 * path has: the contract runs on Boot 4.1 in the default build and on Boot 3.5 in the
 * boot3 profile, and an annotation cannot name a class that one of them lacks. The names
 * are in
 * {@code META-INF/spring/io.github.distlock.contract.ImportBootRedisAutoConfiguration.imports},
 * each {@code optional:}, so the missing one is skipped:
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
