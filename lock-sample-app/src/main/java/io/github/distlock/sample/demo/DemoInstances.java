package io.github.distlock.sample.demo;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.distlock.sample.SampleApplication;
import io.github.distlock.sample.redis.EmbeddedRedisInitializer;
import io.github.distlock.sample.zookeeper.EmbeddedZooKeeperInitializer;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Starts one instance of the sample application for a demo: a separate Spring context
 * without a web server, with its own Redis connections and lock service, so instances
 * coordinate only through Redis, as separate processes would.
 */
final class DemoInstances {

    private DemoInstances() {
    }

    /**
     * Starts an instance named {@code name}.
     * @param name the application name, also the Redis client name
     * ({@code sample-<name>})
     * @param demoProperties settings this demo needs; they override
     * application.properties, while the command line, -D options and environment
     * variables still override them
     * @param args the command line for the instance; it must name the Redis
     */
    static ConfigurableApplicationContext start(String name, Map<String, Object> demoProperties, String... args) {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.application.name", name);
        // Each instance shows up under its own name in CLIENT LIST: two connection pools,
        // not one.
        properties.put("spring.data.redis.client-name", "sample-" + name);
        // The launcher already chose the Redis; an instance starting a server of its own
        // would share nothing.
        properties.put(EmbeddedRedisInitializer.MODE_PROPERTY, "never");
        // The demos lock only on Redis; a private ZooKeeper per instance would be started
        // for nothing.
        properties.put(EmbeddedZooKeeperInitializer.ENABLED_PROPERTY, "false");
        // Roomier than the 2 s default: on a loaded machine the first connection of a
        // fresh instance can take
        // seconds, and a demo should show its problem, not the machine's load.
        properties.put("distributed-lock.operation-timeout", "10s");
        // The table is the output; startup chatter of several instances would bury it.
        properties.put("logging.level.root", "WARN");
        properties.putAll(demoProperties);
        // Placed after the system properties and environment variables but before
        // application.properties,
        // which Spring Boot appends later: the demo's values override the application's
        // own settings, and
        // the command line, -D options and environment variables still override the
        // demo's.
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addLast(new MapPropertySource("sampleDemoInstance", properties));
        return new SpringApplicationBuilder(SampleApplication.class).environment(environment)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            .run(args);
    }

}
