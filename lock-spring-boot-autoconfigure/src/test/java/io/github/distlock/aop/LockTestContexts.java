package io.github.distlock.aop;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.awaitility.core.ConditionTimeoutException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.context.event.EventListener;

import io.github.distlock.LockHandle;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockBackend;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Application contexts as an application using the starter gets them: Boot's Redis
 * auto-configuration, the lock service and the annotation support, against a test Redis.
 */
final class LockTestContexts {

    static final AutoConfigurations LOCK_AUTO_CONFIGURATIONS = AutoConfigurations.of(BootAutoConfigurations.REDIS,
            DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class);

    private LockTestContexts() {
    }

    /**
     * A runner whose contexts each get their own Redis connection factory, pointing at
     * {@code server}.
     */
    static ApplicationContextRunner runner(RedisTestServer server) {
        return new ApplicationContextRunner().withConfiguration(LOCK_AUTO_CONFIGURATIONS)
            .withBean(LockProbe.class, () -> new LockProbe(server))
            .withBean(ConnectedBeforeTheTest.class)
            .withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port());
    }

    /**
     * The lock commands clients sent since the server's stats were last reset: bare
     * {@code SET}s (a free lock's acquisition) plus scripts (everything else). Valid
     * while no script ran a {@code SET} of its own, which Redis 7 would count too: a
     * contended acquisition or a hand-over.
     */
    static long lockRoundTrips(RedisTestServer server) {
        return server.commandCalls("set") + server.scriptCalls();
    }

    /**
     * Looks at the lock keys in the test Redis from inside a guarded method. A separate
     * type rather than the server itself, because the context would close an
     * {@link AutoCloseable} bean (and with it the server).
     */
    static final class LockProbe {

        private final RedisTestServer server;

        LockProbe(RedisTestServer server) {
            this.server = server;
        }

        /**
         * The lock keys present right now, without companion keys such as
         * {@code lock:{k}:fence}.
         */
        List<String> heldLocks() {
            List<?> keys = (List<?>) server.command("KEYS", "lock:*");
            return keys.stream().map(String.class::cast).filter(key -> key.endsWith("}")).sorted().toList();
        }

        /** Whether the given Redis key exists. */
        boolean exists(String redisKey) {
            return Long.valueOf(1).equals(server.command("EXISTS", redisKey));
        }

        /** The remaining lifetime of a key in milliseconds. */
        long pttl(String redisKey) {
            return server.pttl(redisKey);
        }

        RedisTestServer server() {
            return server;
        }

    }

    /**
     * Receives {@link LockLostEvent}s the way an application does, through
     * {@code @EventListener}.
     */
    static final class LostLeases {

        private final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

        @EventListener
        public void onLockLost(LockLostEvent event) {
            events.add(event);
        }

        /** The events received so far. */
        List<LockLostEvent> events() {
            return events;
        }

        /** Whether a lease of {@code key} was reported lost. */
        boolean lost(String key) {
            return events.stream().anyMatch(event -> event.getKey().equals(key));
        }

    }

    /**
     * Opens the lock's connection once the context is up, retrying: in a cold test JVM on
     * a busy machine the first connect (Lettuce's event loops, class loading) can take
     * longer than the operation timeout (2 s by default, 300 ms in some tests), and would
     * then fail the test's first acquire with a {@code LockBackendException}. A PING, not
     * a lock: no listener, meter or command count sees it. Best effort: a context without
     * one lock backend, or whose Redis is meant to be down, starts as before.
     */
    static final class ConnectedBeforeTheTest implements ApplicationListener<ContextRefreshedEvent> {

        @Override
        public void onApplicationEvent(ContextRefreshedEvent event) {
            LockBackend backend = event.getApplicationContext().getBeanProvider(LockBackend.class).getIfUnique();
            if (backend instanceof InspectableLockBackend inspectable) {
                try {
                    await().atMost(Duration.ofSeconds(10)).until(() -> inspectable.ping().reachable());
                }
                catch (ConditionTimeoutException ex) {
                    // Unreachable on purpose, or still connecting: the test finds out for
                    // itself.
                }
            }
        }

    }

    /** Holds 'busy' through another handle (another owner) while {@code action} runs. */
    static void whileBusyIsHeldElsewhere(ApplicationContext context, ThrowingRunnable action) throws Exception {
        LockHandle other = context.getBean(LockService.class)
            .lock(LockRequest.of("busy").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO));
        try {
            action.run();
        }
        finally {
            other.release();
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {

        void run() throws Exception;

    }

}
