package io.github.distlock.sample.redis;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Starts an {@link EmbeddedRedis} for the sample when no Redis answers at the configured
 * address, and points {@code spring.data.redis.*} at it. Registered in
 * {@code META-INF/spring.factories}, so it runs before any bean, in particular before the
 * {@code RedisConnectionFactory}, is created. The server stops when the application
 * context closes (or fails to start).
 *
 * <p>
 * {@code sample.embedded-redis.mode} chooses:
 * <ul>
 * <li>{@code fallback} (default): use the configured Redis (localhost:6379 unless set) if
 * it accepts connections, otherwise start an embedded one;</li>
 * <li>{@code always}: always start a private embedded Redis, whatever is configured;</li>
 * <li>{@code never}: never start one (tests and the demo's application instances, which
 * are told exactly which Redis to use).</li>
 * </ul>
 * A Sentinel or Cluster configuration is always used as configured.
 */
public class EmbeddedRedisInitializer
        implements ApplicationContextInitializer<ConfigurableApplicationContext>, Ordered {

    /** The property that selects the mode. */
    public static final String MODE_PROPERTY = "sample.embedded-redis.mode";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedRedisInitializer.class);

    private static final String PROPERTY_SOURCE_NAME = "sampleEmbeddedRedis";

    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    /** When to start an embedded Redis. */
    public enum Mode {

        /** Only when nothing answers at the configured address. */
        FALLBACK,
        /** Always, ignoring the configured address. */
        ALWAYS,
        /** Never. */
        NEVER

    }

    @Override
    public int getOrder() {
        // Early, so that any other initializer already sees the final Redis address.
        return Ordered.HIGHEST_PRECEDENCE + 10;
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        ConfigurableEnvironment environment = context.getEnvironment();
        Mode mode = mode(environment);
        if (mode == Mode.NEVER) {
            return;
        }
        if (environment.containsProperty("spring.data.redis.sentinel.master")
                || environment.containsProperty("spring.data.redis.cluster.nodes")) {
            return;
        }
        String configured = null;
        if (mode == Mode.FALLBACK) {
            URI address = configuredAddress(environment);
            configured = address.getHost() + ":" + address.getPort();
            if (EmbeddedRedis.answers(address.getHost(), address.getPort(), PROBE_TIMEOUT)) {
                log.debug("Using the Redis at {}", configured);
                return;
            }
        }
        EmbeddedRedis redis = EmbeddedRedis.start();
        stopWithContext(context, redis);
        environment.getPropertySources()
            .addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, addressOf(redis, environment)));
        if (configured != null) {
            log.info(
                    "No Redis answered at {}; started an embedded redis-server on {}:{} for this application. It stops "
                            + "with the application and keeps no data. Set {}=never to turn this off.",
                    configured, EmbeddedRedis.HOST, redis.port(), MODE_PROPERTY);
        }
        else {
            log.info("Started a private embedded redis-server on {}:{} ({}=always). It stops with the application "
                    + "and keeps no data.", EmbeddedRedis.HOST, redis.port(), MODE_PROPERTY);
        }
    }

    private static Mode mode(ConfigurableEnvironment environment) {
        String value = environment.getProperty(MODE_PROPERTY, "fallback").trim();
        try {
            return Mode.valueOf(value.toUpperCase(Locale.ROOT));
        }
        catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "Invalid " + MODE_PROPERTY + " '" + value + "'; use fallback, always or never.", e);
        }
    }

    /**
     * The address Spring Boot would connect to: spring.data.redis.url, else host and
     * port.
     */
    private static URI configuredAddress(ConfigurableEnvironment environment) {
        String url = environment.getProperty("spring.data.redis.url");
        if (StringUtils.hasText(url)) {
            URI uri = URI.create(url.trim());
            return URI.create("redis://" + uri.getHost() + ":" + (uri.getPort() > 0 ? uri.getPort() : 6379));
        }
        String host = environment.getProperty("spring.data.redis.host", "localhost");
        int port = environment.getProperty("spring.data.redis.port", Integer.class, 6379);
        return URI.create("redis://" + host + ":" + port);
    }

    /**
     * Properties that override every other Redis address setting with the embedded
     * server.
     */
    private static Map<String, Object> addressOf(EmbeddedRedis redis, ConfigurableEnvironment environment) {
        Map<String, Object> properties = new LinkedHashMap<>();
        if (environment.containsProperty("spring.data.redis.url")) {
            // The URL wins over host and port in Spring Boot, so it has to be replaced
            // too.
            properties.put("spring.data.redis.url", "redis://" + EmbeddedRedis.HOST + ":" + redis.port());
        }
        properties.put("spring.data.redis.host", EmbeddedRedis.HOST);
        properties.put("spring.data.redis.port", redis.port());
        // The embedded server has no password and no TLS; credentials meant for another
        // server would fail.
        for (String credential : new String[] { "spring.data.redis.username", "spring.data.redis.password" }) {
            if (environment.containsProperty(credential)) {
                properties.put(credential, "");
            }
        }
        properties.put("spring.data.redis.ssl.enabled", false);
        return properties;
    }

    private static void stopWithContext(ConfigurableApplicationContext context, EmbeddedRedis redis) {
        ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
        beanFactory.registerSingleton("sampleEmbeddedRedis", redis);
        // A manually registered singleton is not destroyed by itself. Registering it as
        // disposable makes
        // the context stop the server on close and also when the refresh fails.
        // Registered before any
        // other bean, it is destroyed after all of them, so the Redis clients disconnect
        // first.
        if (beanFactory instanceof DefaultSingletonBeanRegistry registry) {
            registry.registerDisposableBean("sampleEmbeddedRedis", redis::close);
        }
        else {
            context.addApplicationListener(event -> {
                if (event instanceof org.springframework.context.event.ContextClosedEvent) {
                    redis.close();
                }
            });
        }
    }

}
