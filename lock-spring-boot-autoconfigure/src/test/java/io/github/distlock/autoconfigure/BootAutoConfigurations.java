package io.github.distlock.autoconfigure;

import org.springframework.util.ClassUtils;

/**
 * Spring Boot's own auto-configurations (and a few other types) that the tests start,
 * found by name because Spring Boot 4 moved them into per-technology modules and
 * packages: the same test sources then compile and run against Boot 4.1 (the default
 * build) and Boot 3.5 ({@code -Pboot3}). Each constant is the class of whichever
 * generation is on the test class path; a name missing from both fails the test class's
 * initialisation, naming both.
 *
 * <pre>{@code
 * new ApplicationContextRunner()
 *         .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
 *                 DistributedLockAutoConfiguration.class));
 * }</pre>
 */
public final class BootAutoConfigurations {

    public static final Class<?> REDIS = either(
            "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration");

    public static final Class<?> DATA_SOURCE = either(
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");

    public static final Class<?> DATA_SOURCE_TRANSACTION_MANAGER = either(
            "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration");

    public static final Class<?> JDBC_TEMPLATE = either(
            "org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration");

    public static final Class<?> TRANSACTION = either(
            "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
            "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration");

    public static final Class<?> DISPATCHER_SERVLET = either(
            "org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration",
            "org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration");

    public static final Class<?> WEB_MVC = either(
            "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration",
            "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration");

    public static final Class<?> HTTP_MESSAGE_CONVERTERS = either(
            "org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration",
            "org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration");

    public static final Class<?> JACKSON = either(
            "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration",
            "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration");

    public static final Class<?> HEALTH_CONTRIBUTOR = either(
            "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration",
            "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration");

    public static final Class<?> METRICS = either(
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration");

    public static final Class<?> COMPOSITE_METER_REGISTRY = either(
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration");

    public static final Class<?> SIMPLE_METRICS_EXPORT = either(
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple."
                    + "SimpleMetricsExportAutoConfiguration");

    public static final Class<?> OBSERVATION = either(
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration");

    /**
     * Not an auto-configuration: the callback interface that customizes Boot's
     * {@code ObservationRegistry}.
     */
    public static final Class<?> OBSERVATION_REGISTRY_CUSTOMIZER = either(
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationRegistryCustomizer",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationRegistryCustomizer");

    /**
     * Not an auto-configuration: a health contributor that reports a status, the type of
     * ours.
     */
    public static final Class<?> HEALTH_INDICATOR = either("org.springframework.boot.actuate.health.HealthIndicator",
            "org.springframework.boot.health.contributor.HealthIndicator");

    /** Not an auto-configuration: the type of a reactive web application's context. */
    public static final Class<?> REACTIVE_WEB_APPLICATION_CONTEXT = either(
            "org.springframework.boot.web.reactive.context.ReactiveWebApplicationContext",
            "org.springframework.boot.web.context.reactive.ReactiveWebApplicationContext");

    private BootAutoConfigurations() {
    }

    /**
     * The property that turns off the long-task timers of Boot's meter observation
     * handler: Boot 4 lists the meters to leave out, Boot 3 had a switch.
     */
    public static String longTaskTimersOff() {
        return isBoot4() ? "management.metrics.observations.ignored-meters=long-task-timer"
                : "management.observations.long-task-timer.enabled=false";
    }

    /**
     * Whether the test class path has Spring Boot 4 (its Redis auto-configuration is in
     * Boot 4's package).
     */
    public static boolean isBoot4() {
        return REDIS.getName().startsWith("org.springframework.boot.data.redis.");
    }

    private static Class<?> either(String boot3Name, String boot4Name) {
        ClassLoader loader = BootAutoConfigurations.class.getClassLoader();
        for (String name : new String[] { boot3Name, boot4Name }) {
            if (ClassUtils.isPresent(name, loader)) {
                return ClassUtils.resolveClassName(name, loader);
            }
        }
        throw new IllegalStateException("Neither " + boot3Name + " (Spring Boot 3) nor " + boot4Name
                + " (Spring Boot 4) is on the test class path; add the Boot module that holds it as a test dependency");
    }

}
