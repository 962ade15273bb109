package io.github.distlock.autoconfigure.web;

import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockProperties;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.distlock.LockTimeoutException;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.web.LockProblemDetailsExceptionHandler;

/**
 * Each condition of {@link DistributedLockWebMvcAutoConfiguration} and
 * {@link DistributedLockWebFluxAutoConfiguration}. No Redis is needed: the connection
 * factory connects lazily.
 */
class DistributedLockWebAutoConfigurationTest {

    private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(BootAutoConfigurations.REDIS,
            DistributedLockAutoConfiguration.class, DistributedLockWebMvcAutoConfiguration.class,
            DistributedLockWebFluxAutoConfiguration.class);

    private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
        .withConfiguration(CONFIGURATIONS);

    private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
        .withConfiguration(CONFIGURATIONS);

    @Test
    void servletApplicationGetsTheProblemDetailsHandlerByDefault() {
        servlet.run(context -> {
            assertThat(context).hasSingleBean(LockProblemDetailsExceptionHandler.class);
            DistributedLockProperties.Web.ProblemDetails properties = context.getBean(DistributedLockProperties.class)
                .getWeb()
                .getProblemDetails();
            assertThat(properties.isEnabled()).isTrue();
            assertThat(properties.getBusyRetryAfter()).hasSeconds(1);
            assertThat(properties.getUnavailableRetryAfter()).hasSeconds(5);
        });
    }

    @Test
    void reactiveApplicationGetsTheProblemDetailsHandlerToo() {
        reactive.run(context -> assertThat(context).hasSingleBean(LockProblemDetailsExceptionHandler.class));
    }

    @Test
    void offWithTheProperty() {
        servlet.withPropertyValues("distributed-lock.web.problem-details.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
        reactive.withPropertyValues("distributed-lock.web.problem-details.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
    }

    @Test
    void absentInANonWebApplication() {
        new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
    }

    @Test
    void absentWithoutSpringMvcOrWebFluxOnTheClasspath() {
        servlet.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
        reactive.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
    }

    @Test
    void absentWhenTheStarterIsOff() {
        servlet.withPropertyValues("distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
    }

    @Test
    void backsOffForTheApplicationsOwnHandlerBean() {
        servlet.withBean("ownHandler", OwnHandler.class).run(context -> {
            assertThat(context).hasSingleBean(LockProblemDetailsExceptionHandler.class);
            assertThat(context).getBean(LockProblemDetailsExceptionHandler.class).isInstanceOf(OwnHandler.class);
        });
    }

    @Test
    void retryAfterComesFromTheProperties() {
        servlet.withPropertyValues("distributed-lock.web.problem-details.busy-retry-after=3s").run(context -> {
            LockProblemDetailsExceptionHandler handler = context.getBean(LockProblemDetailsExceptionHandler.class);
            assertThat(handler.handleLockTimeout(new LockTimeoutException("k", Duration.ofSeconds(1)))
                .getHeaders()
                .getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("3");
        });
    }

    @Test
    void negativeRetryAfterFailsTheStartupNamingTheProperty() {
        servlet.withPropertyValues("distributed-lock.web.problem-details.unavailable-retry-after=-1s")
            .run(context -> assertThat(context).hasFailed()
                .getFailure()
                .rootCause()
                .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                .hasMessageContaining("distributed-lock.web.problem-details.unavailable-retry-after"));
    }

    static class OwnHandler extends LockProblemDetailsExceptionHandler {

    }

}
