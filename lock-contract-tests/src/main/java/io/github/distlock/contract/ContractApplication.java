package io.github.distlock.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import io.github.distlock.LockLostEvent;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;

/**
 * One instance of an application that uses the starter, started the way Spring Boot
 * starts one: two of them are two service instances with their own connections,
 * subscriptions and watchdogs. The contract uses only what an application sees:
 * {@link LockService}, {@code @DistributedLock} ({@link GuardedWork}) and
 * {@link LockLostEvent}s.
 */
public final class ContractApplication implements AutoCloseable {

    private final ConfigurableApplicationContext context;

    private ContractApplication(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /**
     * Starts an instance.
     * @param properties {@code name=value} pairs: the {@code spring.data.redis.*} of the
     * backend and anything else
     * @param sources more configuration classes, e.g. one that declares another
     * {@code RedisConnectionFactory}
     */
    public static ContractApplication start(List<String> properties, Class<?>... sources) {
        List<String> all = new ArrayList<>();
        // Lock commands are bounded by distributed-lock.operation-timeout; the client's
        // own timeout only keeps a
        // broken test from hanging for Lettuce's default minute.
        all.add("spring.data.redis.timeout=10s");
        all.addAll(properties);
        List<Class<?>> allSources = new ArrayList<>(List.of(Application.class));
        allSources.addAll(List.of(sources));
        return new ContractApplication(
                new SpringApplicationBuilder(allSources.toArray(Class<?>[]::new)).web(WebApplicationType.NONE)
                    .bannerMode(Banner.Mode.OFF)
                    .logStartupInfo(false)
                    .properties(all.toArray(String[]::new))
                    .run());
    }

    /** The lock service, as an application injects it. */
    public LockService lockService() {
        return context.getBean(LockService.class);
    }

    /**
     * A bean of this instance, for modules whose tests add auto-configurations of their
     * own (a ShedLock {@code LockProvider}, say).
     */
    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    /** The annotated service methods. */
    public GuardedWork guardedWork() {
        return context.getBean(GuardedWork.class);
    }

    /** The {@link LockLostEvent}s this instance published so far. */
    public List<LockLostEvent> lostLeases() {
        return context.getBean(LostLeases.class).events;
    }

    @Override
    public void close() {
        context.close();
    }

    /**
     * The application: the auto-configurations an application using the starter gets, and
     * its beans. Boot's Redis auto-configuration, of Boot 4 or Boot 3, comes from
     * {@link ImportBootRedisAutoConfiguration}.
     */
    @Configuration(proxyBeanMethods = false)
    @ImportBootRedisAutoConfiguration
    @ImportAutoConfiguration({ SslAutoConfiguration.class, DistributedLockAutoConfiguration.class,
            DistributedLockAnnotationAutoConfiguration.class })
    public static class Application {

        @Bean
        LostLeases lostLeases() {
            return new LostLeases();
        }

        @Bean
        GuardedWork guardedWork() {
            return new GuardedWork();
        }

    }

    /**
     * Collects {@link LockLostEvent}s as an application does, with
     * {@code @EventListener}.
     */
    public static class LostLeases {

        final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

        @EventListener
        public void onLockLost(LockLostEvent event) {
            events.add(event);
        }

    }

}
