package io.github.distlock.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.ImportBootRedisAutoConfiguration;

/**
 * One instance of an application that uses the starter, started the way Spring Boot
 * starts it, from {@code spring.data.redis.*}, {@code spring.ssl.*} and
 * {@code distributed-lock.*} properties. Two of them are two service instances: separate
 * contexts, connection factories, subscriptions and watchdogs. Tests use only what an
 * application sees: {@link LockService}, {@code @DistributedLock} and
 * {@link LockLostEvent}s.
 */
final class LockApplication implements AutoCloseable {

    private final ConfigurableApplicationContext context;

    private LockApplication(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /**
     * Starts an instance.
     * @param properties {@code name=value} pairs, e.g.
     * {@code spring.data.redis.cluster.nodes=127.0.0.1:4711}
     */
    static LockApplication start(String... properties) {
        List<String> all = new ArrayList<>(Arrays.asList(properties));
        // Lock commands fail fast, but the client's own timeout must not hang a broken
        // test for a minute.
        all.add(0, "spring.data.redis.timeout=10s");
        return new LockApplication(new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            .properties(all.toArray(String[]::new))
            .run());
    }

    /**
     * The {@code spring.data.redis.cluster.nodes} property for the given
     * {@code host:port} pairs.
     */
    static String clusterNodes(List<String> hostAndPorts) {
        return "spring.data.redis.cluster.nodes=" + String.join(",", hostAndPorts);
    }

    LockService lockService() {
        return context.getBean(LockService.class);
    }

    /** A bean of this instance's context, for tests that check what was wired. */
    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    GuardedWork guardedWork() {
        return context.getBean(GuardedWork.class);
    }

    /** The {@link LockLostEvent}s this instance published so far. */
    List<LockLostEvent> lostLeases() {
        return context.getBean(LostLeases.class).events;
    }

    @Override
    public void close() {
        context.close();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportBootRedisAutoConfiguration
    @ImportAutoConfiguration({ SslAutoConfiguration.class, DistributedLockAutoConfiguration.class,
            DistributedLockAnnotationAutoConfiguration.class })
    static class Application {

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
    static class LostLeases {

        final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

        @EventListener
        public void onLockLost(LockLostEvent event) {
            events.add(event);
        }

    }

    /**
     * A service method guarded by the annotation, the way applications use the starter.
     */
    static class GuardedWork {

        @DistributedLock(key = "#name", waitTime = "20s")
        public <T> T run(String name, Supplier<T> work) {
            return work.get();
        }

    }

}
