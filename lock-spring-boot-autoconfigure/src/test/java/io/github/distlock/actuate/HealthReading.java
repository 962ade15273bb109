package io.github.distlock.actuate;

import java.lang.reflect.InvocationTargetException;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.context.ApplicationContext;

/**
 * One reading of the {@code distributedLock} health contributor, whichever Spring Boot
 * generation registered it: Boot 3's and Boot 4's {@code Health} have the same
 * {@code getStatus()} and {@code getDetails()} in different packages, so the tests of
 * what the check reports run unchanged on both lines. Which class each generation
 * registers is tested per generation ({@code boot3} and {@code boot4} packages).
 *
 * <pre>{@code
 * Supplier<HealthReading> health = HealthReading.of(context);
 * await().until(() -> health.get().isUp());
 * assertThat(health.get().details()).containsEntry("quorum", 1);
 * }</pre>
 *
 * @param status the status code: {@code UP}, {@code DOWN}, ...
 * @param details the details the check reported
 */
public record HealthReading(String status, Map<String, Object> details) {

    /**
     * The bean name that makes the contributor {@code distributedLock} in
     * {@code /actuator/health}.
     */
    public static final String BEAN_NAME = "distributedLockHealthIndicator";

    /** A fresh reading of the context's contributor on each call. */
    public static Supplier<HealthReading> of(ApplicationContext context) {
        Object indicator = context.getBean(BEAN_NAME);
        return () -> read(indicator);
    }

    /** Calls {@code health()} on either generation's indicator. */
    @SuppressWarnings("unchecked")
    public static HealthReading read(Object indicator) {
        Object health = invoke(indicator, "health");
        Object status = invoke(health, "getStatus");
        return new HealthReading((String) invoke(status, "getCode"),
                (Map<String, Object>) invoke(health, "getDetails"));
    }

    private static Object invoke(Object target, String method) {
        try {
            return target.getClass().getMethod(method).invoke(target);
        }
        catch (InvocationTargetException ex) {
            throw new IllegalStateException(method + "() of " + target.getClass().getName() + " failed", ex.getCause());
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(target.getClass().getName() + " has no public " + method + "()", ex);
        }
    }

    public boolean isUp() {
        return "UP".equals(status);
    }

    public boolean isDown() {
        return "DOWN".equals(status);
    }

    /** A detail that is itself a map, such as {@code nodes} or {@code watchdog}. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> detail(String name) {
        return (Map<String, Object>) details.get(name);
    }

    /** The {@code nodes} entry of one node, by the address the application configured. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> node(String address) {
        return (Map<String, Object>) detail("nodes").get(address);
    }
}
