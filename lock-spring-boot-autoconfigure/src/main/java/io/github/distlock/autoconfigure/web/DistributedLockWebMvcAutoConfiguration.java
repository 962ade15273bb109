package io.github.distlock.autoconfigure.web;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ProblemDetail;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.web.LockProblemDetailsExceptionHandler;

/**
 * Answers lock failures in Spring MVC requests with problem details (see
 * {@link LockProblemDetailsExceptionHandler}).
 *
 * <p>
 * Only in a servlet web application with a {@link LockService}; off with
 * {@code distributed-lock.web.problem-details.enabled=false}; backs off for a handler
 * bean of the application's own.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass({ DispatcherServlet.class, ProblemDetail.class })
@ConditionalOnBean(LockService.class)
@ConditionalOnProperty(prefix = DistributedLockProperties.PREFIX + ".web.problem-details", name = "enabled",
        havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(DistributedLockProperties.class)
public class DistributedLockWebMvcAutoConfiguration {

    /**
     * The controller advice that turns lock exceptions into 409, 503, 500 and 400 problem
     * details.
     * @param properties the {@code Retry-After} values
     * @return the handler
     */
    @Bean
    @ConditionalOnMissingBean
    public LockProblemDetailsExceptionHandler lockProblemDetailsExceptionHandler(DistributedLockProperties properties) {
        DistributedLockProperties.Web.ProblemDetails problemDetails = properties.getWeb().getProblemDetails();
        return new LockProblemDetailsExceptionHandler(problemDetails.getBusyRetryAfter(),
                problemDetails.getUnavailableRetryAfter());
    }

}
