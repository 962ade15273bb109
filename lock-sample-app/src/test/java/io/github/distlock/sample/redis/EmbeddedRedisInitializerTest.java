package io.github.distlock.sample.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;

/** When the sample starts its own Redis, and that it stops it again. */
class EmbeddedRedisInitializerTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    /**
     * Patient, as a busy machine can take long to answer; a port nothing listens on
     * refuses at once anyway.
     */
    private static final Duration PROBE = Duration.ofSeconds(5);

    @Test
    void startsEmbeddedRedisWhenNothingAnswersAndStopsItWithTheContext() throws IOException {
        int deadPort = unusedPort();
        GenericApplicationContext context = context(
                Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", deadPort));

        new EmbeddedRedisInitializer().initialize(context);
        context.refresh();

        int port = context.getEnvironment().getRequiredProperty("spring.data.redis.port", Integer.class);
        assertThat(port).isNotEqualTo(deadPort);
        assertThat(context.getEnvironment().getProperty("spring.data.redis.host")).isEqualTo("127.0.0.1");
        assertThat(EmbeddedRedis.answers("127.0.0.1", port, PROBE)).isTrue();

        context.close();

        assertThat(EmbeddedRedis.answers("127.0.0.1", port, PROBE)).isFalse();
    }

    @Test
    void usesTheConfiguredRedisWhenItAnswers() {
        GenericApplicationContext context = context(Map.of("spring.data.redis.url", redis.redisUri()));

        new EmbeddedRedisInitializer().initialize(context);

        assertThat(context.getEnvironment().getPropertySources().contains("sampleEmbeddedRedis")).isFalse();
        assertThat(context.getBeanFactory().containsSingleton("sampleEmbeddedRedis")).isFalse();
    }

    @Test
    void neverModeStartsNothingAndAlwaysModeIgnoresTheConfiguredRedis() {
        GenericApplicationContext never = context(
                Map.of(EmbeddedRedisInitializer.MODE_PROPERTY, "never", "spring.data.redis.port", 1));
        new EmbeddedRedisInitializer().initialize(never);
        assertThat(never.getEnvironment().getProperty("spring.data.redis.port")).isEqualTo("1");

        GenericApplicationContext always = context(
                Map.of(EmbeddedRedisInitializer.MODE_PROPERTY, "ALWAYS", "spring.data.redis.url", redis.redisUri()));
        new EmbeddedRedisInitializer().initialize(always);
        always.refresh();
        try {
            String url = always.getEnvironment().getProperty("spring.data.redis.url");
            assertThat(url).startsWith("redis://127.0.0.1:").isNotEqualTo(redis.redisUri());
        }
        finally {
            always.close();
        }
    }

    @Test
    void invalidModeNamesTheProperty() {
        GenericApplicationContext context = context(Map.of(EmbeddedRedisInitializer.MODE_PROPERTY, "sometimes"));

        assertThatThrownBy(() -> new EmbeddedRedisInitializer().initialize(context))
            .hasMessageContaining(EmbeddedRedisInitializer.MODE_PROPERTY);
    }

    private static GenericApplicationContext context(Map<String, Object> properties) {
        GenericApplicationContext context = new GenericApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
        return context;
    }

    private static int unusedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

}
