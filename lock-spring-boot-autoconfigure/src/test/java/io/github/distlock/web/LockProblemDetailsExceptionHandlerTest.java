package io.github.distlock.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.WebApplicationContext;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockKeys;
import io.github.distlock.LockLostException;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.web.DistributedLockWebMvcAutoConfiguration;

/**
 * What {@link LockProblemDetailsExceptionHandler} answers for each lock exception, and
 * that an application's own handlers come first. Through Spring MVC's dispatcher
 * (MockMvc), with the handler from the auto-configuration and the exceptions thrown by a
 * controller; the HTTP tests in {@code io.github.distlock.autoconfigure.web} take them
 * from real locks. No Redis is needed: the connection factory connects lazily.
 */
class LockProblemDetailsExceptionHandlerTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.DISPATCHER_SERVLET,
                BootAutoConfigurations.WEB_MVC, BootAutoConfigurations.HTTP_MESSAGE_CONVERTERS,
                BootAutoConfigurations.JACKSON, BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class,
                DistributedLockWebMvcAutoConfiguration.class))
        .withUserConfiguration(ThrowingController.class);

    @Test
    void busyLockAnswers409ProblemWithRetryAfter() {
        perform(runner, "/timeout/order:1",
                mvc -> mvc.andExpect(status().isConflict())
                    .andExpect(header().string(HttpHeaders.CONTENT_TYPE, MediaType.APPLICATION_PROBLEM_JSON_VALUE))
                    .andExpect(header().string(HttpHeaders.RETRY_AFTER, "1"))
                    .andExpect(jsonPath("$.type").value(LockProblemDetailsExceptionHandler.LOCK_BUSY.toString()))
                    .andExpect(jsonPath("$.title").value("Resource busy"))
                    .andExpect(jsonPath("$.status").value(409))
                    .andExpect(jsonPath("$.detail")
                        .value("Another request is working on 'order:1'. This request was not processed; retry later."))
                    .andExpect(jsonPath("$.instance").value("/timeout/order:1"))
                    .andExpect(jsonPath("$.lockKey").value("order:1"))
                    .andExpect(jsonPath("$.waitedMillis").value(1500)));
    }

    @Test
    void unreachableLockStoreAnswers503ProblemWithRetryAfterAndWithoutTheOperatorsMessage() throws Exception {
        MvcResult result = perform(runner, "/backend/order:2",
                mvc -> mvc.andExpect(status().isServiceUnavailable())
                    .andExpect(header().string(HttpHeaders.RETRY_AFTER, "5"))
                    .andExpect(jsonPath("$.type").value(LockProblemDetailsExceptionHandler.LOCK_UNAVAILABLE.toString()))
                    .andExpect(jsonPath("$.title").value("Lock unavailable"))
                    .andExpect(jsonPath("$.lockKey").value("order:2")));
        assertThat(body(result)).doesNotContain("redis.internal").doesNotContain("6379");
    }

    @Test
    void anyOtherAcquisitionFailureAnswers503Too() {
        perform(runner, "/interrupted/order:3",
                mvc -> mvc.andExpect(status().isServiceUnavailable())
                    .andExpect(header().string(HttpHeaders.RETRY_AFTER, "5"))
                    .andExpect(jsonPath("$.lockKey").value("order:3")));
    }

    @Test
    void leaseLostAnswers500ProblemWithoutRetryAfter() {
        perform(runner, "/lost/order:4",
                mvc -> mvc.andExpect(status().isInternalServerError())
                    .andExpect(header().doesNotExist(HttpHeaders.RETRY_AFTER))
                    .andExpect(jsonPath("$.type").value(LockProblemDetailsExceptionHandler.LOCK_LOST.toString()))
                    .andExpect(jsonPath("$.title").value("Lock lost"))
                    .andExpect(jsonPath("$.lockKey").value("order:4")));
    }

    @Test
    void keyIsShownWithoutControlCharactersAndShortened() {
        String longKey = "x".repeat(500);
        perform(runner, "/timeout/" + longKey,
                mvc -> mvc.andExpect(status().isConflict())
                    .andExpect(jsonPath("$.lockKey").value("x".repeat(200) + "..."))
                    .andExpect(jsonPath("$.detail").value("Another request is working on '" + "x".repeat(200)
                            + "...'. This request was not processed; " + "retry later.")));

        perform(runner, "/forged", mvc -> mvc.andExpect(status().isConflict())
            .andExpect(jsonPath("$.lockKey").value("order:5?? WARN forged")));
    }

    @Test
    void anInvalidKeyFromAnyLockServiceCallAnswers400ProblemWithoutRetryAfterOrTheOperatorsMessage() throws Exception {
        MvcResult result = perform(runner, "/invalid-key/60",
                mvc -> mvc.andExpect(status().isBadRequest())
                    .andExpect(header().string(HttpHeaders.CONTENT_TYPE, MediaType.APPLICATION_PROBLEM_JSON_VALUE))
                    .andExpect(header().doesNotExist(HttpHeaders.RETRY_AFTER))
                    .andExpect(jsonPath("$.type").value(LockProblemDetailsExceptionHandler.INVALID_LOCK_KEY.toString()))
                    .andExpect(jsonPath("$.title").value("Invalid lock key"))
                    .andExpect(jsonPath("$.status").value(400))
                    .andExpect(jsonPath("$.lockKey").value("a?" + "b".repeat(48) + "..."))
                    .andExpect(jsonPath("$.keyLength").value(60))
                    .andExpect(jsonPath("$.maxKeyLength").value(16)));
        assertThat(body(result)).doesNotContain("Nothing was locked").doesNotContain("b".repeat(49));

        perform(runner, "/invalid-key/0", mvc -> mvc.andExpect(status().isBadRequest())
            .andExpect(jsonPath("$.detail").value("The lock key built from this request is empty or blank. This "
                    + "request was not processed; send a non-blank value."))
            .andExpect(jsonPath("$.keyLength").doesNotExist()));
    }

    @Test
    void retryAfterIsRoundedUpToWholeSecondsAndZeroOmitsIt() {
        WebApplicationContextRunner tuned = runner.withPropertyValues(
                "distributed-lock.web.problem-details.busy-retry-after=1500ms",
                "distributed-lock.web.problem-details.unavailable-retry-after=0s");
        perform(tuned, "/timeout/order:6", mvc -> mvc.andExpect(header().string(HttpHeaders.RETRY_AFTER, "2")));
        perform(tuned, "/backend/order:6", mvc -> mvc.andExpect(status().isServiceUnavailable())
            .andExpect(header().doesNotExist(HttpHeaders.RETRY_AFTER)));
    }

    @Test
    void applicationsOwnControllerAdviceWinsEvenWithoutAnOrder() {
        perform(runner.withUserConfiguration(OwnAdvice.class), "/timeout/order:7",
                mvc -> mvc.andExpect(status().isTooManyRequests()));
        // The exceptions the application does not handle itself are still ours.
        perform(runner.withUserConfiguration(OwnAdvice.class), "/lost/order:7",
                mvc -> mvc.andExpect(status().isInternalServerError())
                    .andExpect(jsonPath("$.title").value("Lock lost")));
    }

    @Test
    void controllersOwnExceptionHandlerWins() {
        perform(runner.withUserConfiguration(ControllerWithOwnHandler.class), "/own/order:8",
                mvc -> mvc.andExpect(status().isTooManyRequests()));
    }

    private static MvcResult perform(WebApplicationContextRunner runner, String uri, Expectations expectations) {
        MvcResult[] result = new MvcResult[1];
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            MockMvc mvc = MockMvcBuilders.webAppContextSetup((WebApplicationContext) context).build();
            result[0] = expectations.check(mvc.perform(get(uri))).andReturn();
        });
        return result[0];
    }

    private static String body(MvcResult result) throws Exception {
        return result.getResponse().getContentAsString();
    }

    @FunctionalInterface
    private interface Expectations {

        ResultActions check(ResultActions actions) throws Exception;

    }

    @RestController
    static class ThrowingController {

        @GetMapping("/timeout/{key}")
        String timeout(@PathVariable String key) {
            throw new LockTimeoutException(key, Duration.ofMillis(1500));
        }

        @GetMapping("/backend/{key}")
        String backend(@PathVariable String key) {
            throw new LockBackendException(key,
                    "Redis did not answer the acquire of lock '" + key + "' at redis.internal:6379", null);
        }

        @GetMapping("/interrupted/{key}")
        String interrupted(@PathVariable String key) {
            throw new LockAcquisitionException(key, "Interrupted during the acquire of lock '" + key + "'.", null);
        }

        @GetMapping("/lost/{key}")
        String lost(@PathVariable String key) {
            throw new LockLostException(key, "The lease of lock '" + key + "' was lost");
        }

        /** As a direct LockService call with a limit of 16 would refuse the key. */
        @GetMapping("/invalid-key/{length}")
        String invalidKey(@PathVariable int length) {
            String key = (length == 0 ? " " : "a\n" + "b".repeat(length - 2));
            return LockKeys.requireValid(key, 16);
        }

        @GetMapping("/forged")
        String forged() {
            throw new LockTimeoutException("order:5\r\n WARN forged", Duration.ofSeconds(1));
        }

    }

    @RestControllerAdvice
    static class OwnAdvice {

        @ExceptionHandler
        ResponseEntity<String> busy(LockTimeoutException ex) {
            return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("busy");
        }

    }

    @RestController
    static class ControllerWithOwnHandler {

        @GetMapping("/own/{key}")
        String own(@PathVariable String key) {
            throw new LockTimeoutException(key, Duration.ofSeconds(1));
        }

        @ExceptionHandler
        ResponseEntity<String> busy(LockTimeoutException ex) {
            return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("busy");
        }

    }

}
