package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurationImportSelector;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties.ClientType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.DistributedLock;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockListener;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.observation.MeterLockListener;
import io.github.distlock.observation.MeterTimingLockListener;
import io.github.distlock.observation.ObservationLockListener;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.SpringDataLockBackend;
import io.github.distlock.redlock.RedlockBackend;

/**
 * A small Spring Boot application holding our lock exactly as a user gets it: Boot's
 * Redis auto-configuration plus every auto-configuration our starter ships, configured
 * only through properties. Each instance has its own client (Lettuce by default, or a
 * Jedis pool) and connections, like a separate application instance. Given a Redlock
 * target, it sets {@code distributed-lock.redlock.nodes} (and {@code durable-nodes}, see
 * {@link #start}) and locks over those nodes instead.
 *
 * <p>
 * Nothing else is auto-configured (except, for the Micrometer run, Boot's metrics and
 * observation auto-configuration): the benchmark classpath also carries Spring
 * Integration, whose Boot auto-configuration would start message-handling infrastructure
 * that a lock user does not have.
 */
public final class OurApplication implements AutoCloseable {

    /**
     * {@code spring.data.redis.jedis.pool.max-active} and {@code max-idle} of the Jedis
     * runs. Our Spring Data backend runs at most 8 commands at once (its executor), the
     * release subscription keeps one pooled connection for as long as it listens, and
     * renewals use up to 4 more: Boot's default of 8 would leave a thread of an 8-thread
     * run waiting for a connection once a waiter has subscribed. Max-idle equal to
     * max-active keeps every opened connection instead of closing and reopening it as the
     * load dips.
     */
    public static final int JEDIS_POOL_SIZE = 16;

    /**
     * System property that, when set (e.g. {@code 500ms}), becomes
     * {@code distributed-lock.redlock.node-timeout} of the Redlock runs; unset, they keep
     * the starter's default. Only for a machine too loaded to answer within the default:
     * the paused-node figures scale with it, and the report says when it was set.
     */
    public static final String REDLOCK_NODE_TIMEOUT_PROPERTY = "bench.redlock.node-timeout";

    private final ConfigurableApplicationContext context;

    private OurApplication(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /**
     * Spring Boot's Actuator auto-configurations that an application with
     * {@code spring-boot-starter-actuator} and no export registry runs for Micrometer: a
     * {@code SimpleMeterRegistry}, the {@code ObservationRegistry} and the observation
     * handler beans Boot registers on it. Used rather than registries built here, so that
     * the benchmark measures whatever our auto-configuration chooses in a real Actuator
     * application.
     */
    static final List<String> BOOT_MICROMETER = List.of(
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple."
                    + "SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration");

    /**
     * Set by {@link #start} when Micrometer is wanted: {@link OurAutoConfigurationOnly}
     * then adds {@link #BOOT_MICROMETER}.
     */
    private static final String MICROMETER_PROPERTY = "bench.micrometer";

    /**
     * Set to {@code false} by {@link #startOn}: the application has no Redis, so Boot's
     * Redis auto-configuration is left out, as an application without Spring Data Redis
     * has it.
     */
    private static final String REDIS_PROPERTY = "bench.redis";

    /**
     * Starts the application against {@code target}.
     * @param target the Redis to use; its wait time becomes the annotation's and the
     * default wait
     * @param ttl the default lease ({@code distributed-lock.default-ttl}), or
     * {@code null} for the starter's default
     * @return the running application
     */
    public static OurApplication start(RedisTarget target, Duration ttl) {
        return start(target, ttl, ClientType.LETTUCE);
    }

    /**
     * Starts the application against {@code target} on the given Redis client.
     * @param target the Redis to use; its wait time becomes the annotation's and the
     * default wait
     * @param ttl the default lease ({@code distributed-lock.default-ttl}), or
     * {@code null} for the starter's default
     * @param clientType Lettuce (our native backend) or Jedis (a pool of
     * {@link #JEDIS_POOL_SIZE}, our Spring Data backend)
     * @return the running application
     * @throws IllegalStateException if the auto-configuration did not pick the backend
     * that goes with the client (or the Redlock backend for a Redlock target), so that a
     * run cannot silently measure another one
     */
    public static OurApplication start(RedisTarget target, Duration ttl, ClientType clientType) {
        return start(target, ttl, clientType, false);
    }

    /**
     * Starts the application against {@code target} on the given Redis client, with or
     * without Micrometer.
     * @param target the Redis to use; its wait time becomes the annotation's and the
     * default wait
     * @param ttl the default lease ({@code distributed-lock.default-ttl}), or
     * {@code null} for the starter's default
     * @param clientType Lettuce or Jedis, as in
     * {@link #start(RedisTarget, Duration, ClientType)}
     * @param micrometer whether the application has Micrometer as Spring Boot's Actuator
     * configures it: Boot's own metrics and observation auto-configuration
     * ({@link #BOOT_MICROMETER}) declare a {@code SimpleMeterRegistry}, the
     * {@code ObservationRegistry} and its {@code DefaultMeterObservationHandler}, and our
     * observation auto-configuration instruments every lock the way it would in that
     * application
     * @return the running application
     * @throws IllegalStateException as {@link #start(RedisTarget, Duration, ClientType)},
     * or if Micrometer was asked for and no lock listener of ours was wired
     */
    public static OurApplication start(RedisTarget target, Duration ttl, ClientType clientType, boolean micrometer) {
        Map<String, Object> properties = new java.util.HashMap<>(
                Map.of("spring.data.redis.host", target.host(), "spring.data.redis.port", target.port(),
                        "distributed-lock.default-wait-time", target.waitTime().toMillis() + "ms",
                        "bench.lock.wait-time", target.waitTime().toMillis() + "ms", "spring.main.banner-mode", "off",
                        "spring.main.log-startup-info", "false", "logging.level.root", "WARN"));
        if (ttl != null) {
            properties.put("distributed-lock.default-ttl", ttl.toMillis() + "ms");
        }
        properties.put("spring.data.redis.client-type", clientType.name().toLowerCase(Locale.ROOT));
        if (!target.nodePorts().isEmpty()) {
            properties.put("distributed-lock.redlock.nodes", String.join(",", target.nodeUris()));
            // The nodes were started a moment ago for this measurement. With restart
            // protection on (the
            // default, kept), a node up for less than the longest lease (30 s) does not
            // vote, which is right
            // for a fresh deployment but is not the steady state users run in. Declaring
            // the nodes durable
            // makes them vote once checked, like nodes that have been up for long: the
            // same lock path and
            // the same once-a-second checks as the default configuration after its first
            // 30 s.
            properties.put("distributed-lock.redlock.durable-nodes", String.join(",", target.nodeUris()));
            String nodeTimeout = System.getProperty(REDLOCK_NODE_TIMEOUT_PROPERTY, "");
            if (!nodeTimeout.isBlank()) {
                properties.put("distributed-lock.redlock.node-timeout", nodeTimeout.trim());
            }
        }
        if (clientType == ClientType.JEDIS) {
            properties.put("spring.data.redis.jedis.pool.enabled", "true");
            properties.put("spring.data.redis.jedis.pool.max-active", JEDIS_POOL_SIZE);
            properties.put("spring.data.redis.jedis.pool.max-idle", JEDIS_POOL_SIZE);
        }
        if (micrometer) {
            properties.put(MICROMETER_PROPERTY, "true");
        }
        SpringApplicationBuilder builder = new SpringApplicationBuilder(Config.class);
        ConfigurableApplicationContext context = builder.web(WebApplicationType.NONE)
            .registerShutdownHook(false)
            .properties(properties)
            .run();
        try {
            requireBackendFor(target, clientType, context);
            if (micrometer && ((context.getBeansOfType(ObservationLockListener.class).isEmpty()
                    && context.getBeansOfType(MeterTimingLockListener.class).isEmpty())
                    || context.getBeansOfType(MeterLockListener.class).isEmpty())) {
                throw new IllegalStateException("Micrometer registries were given but the lock listeners are "
                        + context.getBeansOfType(LockListener.class).keySet()
                        + "; expected MeterTimingLockListener or ObservationLockListener, and MeterLockListener");
            }
        }
        catch (RuntimeException ex) {
            context.close();
            throw ex;
        }
        return new OurApplication(context);
    }

    /**
     * Starts the application on a store other than Redis (etcd, ZooKeeper), configured
     * only through that store's {@code distributed-lock.*} properties: the store's own
     * auto-configuration declares its backend and the starter's builds the
     * {@code LockService} over it; no Redis is configured.
     * @param storeProperties e.g. {@code distributed-lock.etcd.endpoints}
     * @param expectedBackend the backend the store's auto-configuration must have
     * declared
     * @return the running application
     * @throws IllegalStateException if the application has no backend of that type, so
     * that a run cannot silently measure another store
     */
    public static OurApplication startOn(Map<String, Object> storeProperties,
            Class<? extends LockBackend> expectedBackend, Duration waitTime) {
        Map<String, Object> properties = new java.util.HashMap<>(storeProperties);
        properties.put(REDIS_PROPERTY, "false");
        properties.put("distributed-lock.default-wait-time", waitTime.toMillis() + "ms");
        properties.put("bench.lock.wait-time", waitTime.toMillis() + "ms");
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.main.log-startup-info", "false");
        properties.put("logging.level.root", "WARN");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Config.class).web(WebApplicationType.NONE)
            .registerShutdownHook(false)
            .properties(properties)
            .run();
        boolean found = context.getBeansOfType(NamedLockBackend.class)
            .values()
            .stream()
            .anyMatch(named -> expectedBackend.isInstance(named.backend()))
                || !context.getBeansOfType(expectedBackend).isEmpty();
        if (!found) {
            String backends = context.getBeansOfType(NamedLockBackend.class).values().toString();
            context.close();
            throw new IllegalStateException(storeProperties.keySet() + " are set but the named lock backends are "
                    + backends + "; expected a " + expectedBackend.getSimpleName());
        }
        return new OurApplication(context);
    }

    private static void requireBackendFor(RedisTarget target, ClientType clientType,
            ConfigurableApplicationContext context) {
        if (!target.nodePorts().isEmpty()) {
            if (context.getBeansOfType(RedlockBackend.class).isEmpty()) {
                throw new IllegalStateException("distributed-lock.redlock.nodes is set but the lock backend(s) are "
                        + context.getBeansOfType(LockBackend.class)
                            .values()
                            .stream()
                            .map(backend -> backend.getClass().getSimpleName())
                            .toList()
                        + "; expected RedlockBackend");
            }
            return;
        }
        RedisConnectionFactory factory = context.getBean(RedisConnectionFactory.class);
        boolean expected = switch (clientType) {
            case LETTUCE -> factory instanceof LettuceConnectionFactory
                    && !context.getBeansOfType(LettuceLockBackend.class).isEmpty();
            case JEDIS -> factory instanceof JedisConnectionFactory jedis && jedis.getUsePool()
                    && !context.getBeansOfType(SpringDataLockBackend.class).isEmpty();
        };
        if (!expected) {
            throw new IllegalStateException("client type " + clientType + " got connection factory "
                    + factory.getClass().getSimpleName() + " and lock backend(s) "
                    + context.getBeansOfType(LockBackend.class).keySet() + " "
                    + context.getBeansOfType(LockBackend.class)
                        .values()
                        .stream()
                        .map(backend -> backend.getClass().getSimpleName())
                        .toList()
                    + "; expected "
                    + (clientType == ClientType.JEDIS ? "a pooled JedisConnectionFactory and SpringDataLockBackend"
                            : "LettuceConnectionFactory and LettuceLockBackend"));
        }
    }

    /**
     * A bean of the application, e.g. {@code LockService} or {@link LockedWork}.
     * @param type the bean type
     * @param <T> the bean type
     * @return the single bean of that type
     */
    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void close() {
        context.close();
    }

    /** The application's configuration: our auto-configuration and one annotated bean. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @Import(OurAutoConfigurationOnly.class)
    static class Config {

        @Bean
        LockedWork lockedWork() {
            return new LockedWork();
        }

    }

    /**
     * A bean whose method is guarded by {@code @DistributedLock}; the application proxies
     * it. Public and non-final so that the proxy can subclass it.
     */
    public static class LockedWork {

        /**
         * Runs {@code criticalSection} under the lock named by {@code key}, waiting up to
         * {@code bench.lock.wait-time}; ttl and watchdog are the starter's defaults.
         * @param key the lock key
         * @param criticalSection the work
         */
        @DistributedLock(key = "#key", waitTime = "${bench.lock.wait-time}")
        public void run(String key, Runnable criticalSection) {
            criticalSection.run();
        }

    }

    /**
     * Selects Boot's Redis auto-configuration and every auto-configuration in our
     * package, ordered by their {@code after}/{@code before} declarations like
     * {@code @EnableAutoConfiguration} orders them. Selecting by package instead of
     * naming classes keeps the benchmark running what the starter ships even when its
     * auto-configurations are split or renamed.
     */
    static class OurAutoConfigurationOnly extends AutoConfigurationImportSelector {

        private static final String OUR_PACKAGE = "io.github.distlock.";

        @Override
        protected boolean isEnabled(AnnotationMetadata metadata) {
            return true;
        }

        @Override
        protected AnnotationAttributes getAttributes(AnnotationMetadata metadata) {
            // Stands in for the attributes of an @EnableAutoConfiguration that excludes
            // nothing.
            AnnotationAttributes attributes = new AnnotationAttributes();
            attributes.put("exclude", new String[0]);
            attributes.put("excludeName", new String[0]);
            return attributes;
        }

        @Override
        protected List<String> getCandidateConfigurations(AnnotationMetadata metadata,
                AnnotationAttributes attributes) {
            Set<String> wanted = new HashSet<>();
            if (getEnvironment().getProperty(REDIS_PROPERTY, Boolean.class, true)) {
                wanted.add(DataRedisAutoConfiguration.class.getName());
            }
            if (getEnvironment().getProperty(MICROMETER_PROPERTY, Boolean.class, false)) {
                wanted.addAll(BOOT_MICROMETER);
            }
            return super.getCandidateConfigurations(metadata, attributes).stream()
                .filter(name -> name.startsWith(OUR_PACKAGE) || wanted.contains(name))
                .toList();
        }

    }

}
