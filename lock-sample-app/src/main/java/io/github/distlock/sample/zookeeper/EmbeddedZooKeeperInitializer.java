package io.github.distlock.sample.zookeeper;

import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Starts an {@link EmbeddedZooKeeper} for the sample when
 * {@code distributed-lock.zookeeper.connect-string} is not set, and sets that property to
 * it, so that lock-zookeeper's auto-configuration builds the backend named
 * {@code zookeeper} beside Redis (which stays the default). Registered in
 * {@code META-INF/spring.factories} like the embedded Redis, so it runs before any bean
 * is created; the server stops, and its data directory is deleted, when the application
 * context closes (or fails to start).
 *
 * <p>
 * The embedded server is private to this JVM: two sample instances started without a
 * connect string each have their own, and their ZooKeeper locks do not exclude each
 * other. Give both the same {@code --distributed-lock.zookeeper.connect-string} to share
 * locks. {@code sample.embedded-zookeeper.enabled=false} turns it off; without a connect
 * string the sample then has no ZooKeeper backend and no ledger endpoints.
 */
public class EmbeddedZooKeeperInitializer
        implements ApplicationContextInitializer<ConfigurableApplicationContext>, Ordered {

    /** The property that turns the embedded ZooKeeper off ({@code false}). */
    public static final String ENABLED_PROPERTY = "sample.embedded-zookeeper.enabled";

    /** lock-zookeeper's property: set, it names the ensemble to use. */
    public static final String CONNECT_STRING_PROPERTY = "distributed-lock.zookeeper.connect-string";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedZooKeeperInitializer.class);

    private static final String NAME = "sampleEmbeddedZooKeeper";

    @Override
    public int getOrder() {
        // Early, next to the embedded Redis, so that any other initializer sees the final
        // connect string.
        return Ordered.HIGHEST_PRECEDENCE + 11;
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        ConfigurableEnvironment environment = context.getEnvironment();
        if (!enabled(environment)) {
            return;
        }
        String configured = environment.getProperty(CONNECT_STRING_PROPERTY);
        if (StringUtils.hasText(configured)) {
            log.debug("Using the ZooKeeper at {}", configured);
            return;
        }
        EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start();
        stopWithContext(context, zooKeeper);
        environment.getPropertySources()
            .addFirst(new MapPropertySource(NAME, Map.of(CONNECT_STRING_PROPERTY, zooKeeper.connectString())));
        log.info("{} is not set; started an embedded ZooKeeper on {} for this application's ledger locks. It stops "
                + "with the application, keeps no data and is not shared with other instances. Set {}=false to turn "
                + "it off.", CONNECT_STRING_PROPERTY, zooKeeper.connectString(), ENABLED_PROPERTY);
    }

    private static boolean enabled(ConfigurableEnvironment environment) {
        String value = environment.getProperty(ENABLED_PROPERTY, "true").trim();
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw new IllegalStateException(
                    "Invalid " + ENABLED_PROPERTY + " '" + value + "'; use true (the default) or false.");
        }
        return Boolean.parseBoolean(value);
    }

    private static void stopWithContext(ConfigurableApplicationContext context, EmbeddedZooKeeper zooKeeper) {
        ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
        beanFactory.registerSingleton(NAME, zooKeeper);
        // Registered as disposable, the server stops on close and when the refresh fails;
        // registered before every other bean, it stops after them, so the lock backend's
        // client ends its session first.
        if (beanFactory instanceof DefaultSingletonBeanRegistry registry) {
            registry.registerDisposableBean(NAME, zooKeeper::close);
        }
        else {
            context.addApplicationListener(event -> {
                if (event instanceof ContextClosedEvent) {
                    zooKeeper.close();
                }
            });
        }
    }

}
