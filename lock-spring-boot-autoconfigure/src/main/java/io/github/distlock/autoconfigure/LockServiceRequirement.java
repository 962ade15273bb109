package io.github.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockService;
import io.github.distlock.UnknownLockBackendException;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.RoutingLockService;
import io.github.distlock.aop.LockedMethods;

/**
 * Fails the startup when the application has {@code @DistributedLock} methods but no
 * {@link LockService} the annotation can use, whatever the reason: the lock service's
 * auto-configuration backed off (several Redis connection factories, none primary; no
 * Redis at all; an exclusion), or the application's own lock service is not an autowire
 * candidate, or there are several. Without this the interceptor would exist with nothing
 * to lock with, or the annotation would silently do nothing. Checked once every singleton
 * exists, so that the lock service, whoever declares it, is there if it will ever be.
 */
class LockServiceRequirement implements SmartInitializingSingleton {

    /** A class of lock-redis that the Redis backend configurations also require. */
    static final String REDIS_BACKEND = "io.github.distlock.redis.LockScripts";

    private final ObjectProvider<LockService> lockService;

    private final ConfigurableListableBeanFactory beanFactory;

    private final Environment environment;

    /**
     * @param lockService injected as the interceptor's is, so that both see the same
     * beans: a bean factory's own provider would also return a lone bean that is no
     * autowire candidate, which injection refuses
     * @param beanFactory where the annotated methods are looked for
     * @param environment where the connection settings are read from, to explain a
     * missing lock service
     */
    LockServiceRequirement(ObjectProvider<LockService> lockService, ConfigurableListableBeanFactory beanFactory,
            Environment environment) {
        this.lockService = lockService;
        this.beanFactory = beanFactory;
        this.environment = environment;
    }

    @Override
    public void afterSingletonsInstantiated() {
        LockService service = lockService.getIfUnique();
        if (service != null) {
            requireBackendsAndMinHoldSupport(service);
            return;
        }
        List<String> lockedMethods = LockedMethods.of(beanFactory);
        if (!lockedMethods.isEmpty()) {
            Explanation explanation = explain();
            throw new NoLockServiceException(lockedMethods, explanation.reason(), explanation.action());
        }
    }

    /**
     * A method that names a backend needs one of that name, and a method with a minimum
     * hold a backend that can keep it: otherwise its first call would fail, so the
     * startup fails now, naming the methods.
     */
    private void requireBackendsAndMinHoldSupport(LockService service) {
        Set<String> names = (service instanceof RoutingLockService routing ? routing.backendNames()
                : service instanceof DefaultLockService single ? Set.of(single.backendName()) : null);
        List<String> methods = new ArrayList<>();
        for (Map.Entry<String, DistributedLock> locked : LockedMethods.annotations(beanFactory).entrySet()) {
            DistributedLock annotation = locked.getValue();
            String backend = (annotation.backend().isEmpty() ? null : annotation.backend());
            if (backend != null && names != null && !names.contains(backend)) {
                throw new UnknownLockBackendException(backend, names, "@DistributedLock on " + locked.getKey());
            }
            if (!annotation.minHold().isEmpty() && !supportsMinHold(service, backend)) {
                methods.add(locked.getKey());
            }
        }
        if (!methods.isEmpty()) {
            throw new IllegalStateException("@DistributedLock(minHold = ...) on " + String.join(", ", methods)
                    + " cannot be kept: the lock service (" + service.getClass().getName() + ") cannot shorten a "
                    + "lease on its own token (LockService.supportsMinHold() is false), so a release before the "
                    + "minimum hold ends could only delete the lock. Lock on Redis (spring.data.redis.*), on Redlock "
                    + "over Redis nodes (" + RedlockProperties.PREFIX + ".nodes) or on an InMemoryLockBackend, give "
                    + "a custom backend LeaseAdjustingLockBackend, or remove minHold from these methods.");
        }
    }

    private static boolean supportsMinHold(LockService service, String backend) {
        return (service instanceof RoutingLockService routing ? routing.supportsMinHold(backend)
                : service.supportsMinHold());
    }

    /**
     * Why there is no usable lock service, and the fix: the first cause that applies,
     * most specific first.
     */
    private Explanation explain() {
        String[] services = BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, LockService.class, true,
                false);
        if (services.length > 1) {
            return new Explanation(
                    "there are " + services.length + " LockService beans, " + String.join(", ", services)
                            + ", and none is @Primary",
                    "Mark the one the annotation should use @Primary, or keep only one.");
        }
        if (services.length == 1) {
            return new Explanation("the LockService bean '" + services[0] + "' is not an autowire candidate "
                    + "(declared with autowireCandidate = false or defaultCandidate = false), so the annotation "
                    + "cannot use it", "Declare it as an ordinary bean, or remove it to use the auto-configured one.");
        }
        if (ConditionEvaluationReport.get(beanFactory)
            .getExclusions()
            .contains(DistributedLockAutoConfiguration.class.getName())) {
            return new Explanation(
                    DistributedLockAutoConfiguration.class.getSimpleName() + " is excluded "
                            + "(spring.autoconfigure.exclude, or exclude on @SpringBootApplication or "
                            + "@EnableAutoConfiguration)",
                    "Remove the exclusion, or declare a LockService bean of your own.");
        }
        ClassLoader classLoader = beanFactory.getBeanClassLoader();
        boolean redlock = Binder.get(environment)
            .bind(RedlockProperties.PREFIX + ".nodes", Bindable.listOf(String.class))
            .map(nodes -> !nodes.isEmpty())
            .orElse(false);
        if (redlock && !ClassUtils.isPresent("io.lettuce.core.RedisClient", classLoader)) {
            return new Explanation(
                    RedlockProperties.PREFIX + ".nodes is set, but Redlock needs Lettuce "
                            + "(io.lettuce:lettuce-core), which is not on the classpath",
                    "Add io.lettuce:lettuce-core to the dependencies, or remove " + RedlockProperties.PREFIX
                            + ".nodes to lock on spring.data.redis.*.");
        }
        if (!ClassUtils.isPresent(REDIS_BACKEND, classLoader)) {
            return new Explanation(
                    "the Redis backend (io.github.distlock:lock-redis) is not on the classpath, so "
                            + "there is no store to lock in",
                    "Depend on io.github.distlock:lock-spring-boot-starter, which "
                            + "brings it with Spring Data Redis, or declare a LockBackend bean of your own (an "
                            + "InMemoryLockBackend in tests).");
        }
        if (!ClassUtils.isPresent("org.springframework.data.redis.connection.RedisConnectionFactory", classLoader)) {
            return new Explanation("Spring Data Redis is not on the classpath, so there is no Redis to lock on",
                    "Add spring-boot-starter-data-redis (it brings Lettuce) and set spring.data.redis.*, or declare "
                            + "a LockBackend bean of your own.");
        }
        LockConnectionFactorySelection.Choice choice = LockConnectionFactorySelection.choose(beanFactory, environment);
        if (!choice.chosen() && choice.candidates().isEmpty()) {
            return new Explanation("there is no RedisConnectionFactory bean to lock on", "Spring Boot's Redis "
                    + "auto-configuration creates one from spring.data.redis.*: check that it is not excluded, or "
                    + "declare a RedisConnectionFactory bean.");
        }
        if (!choice.chosen()) {
            return new Explanation(choice.problem(),
                    "Name the one the locks should use, for example " + LockConnectionFactorySelection.PROPERTY + "="
                            + choice.candidates().get(0) + ", or mark one of them @Primary.");
        }
        return new Explanation("the lock service's auto-configuration did not apply",
                "Start the application with --debug and look for DistributedLockAutoConfiguration and its backend "
                        + "configurations in the conditions evaluation report.");
    }

    /** Why there is no lock service, as a clause, and what to do, as sentences. */
    private record Explanation(String reason, String action) {
    }

}
