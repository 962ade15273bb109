package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.distlock.sample.redis.EmbeddedRedisInitializer;
import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * The demo's claim, checked: two instances oversell without the lock and balance with it.
 */
class OversellDemoTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void unguardedOversellsAndGuardedSellsExactlyTheStock() {
        DemoSettings settings = DemoSettings.defaults();

        DemoReport report = OversellDemo.run(settings, "--spring.data.redis.host=" + redis.host(),
                "--spring.data.redis.port=" + redis.port());

        DemoRow unguarded = report.row(OversellDemo.UNGUARDED);
        DemoRow guarded = report.row(OversellDemo.GUARDED);
        assertThat(unguarded.errors()).as("unexpected failures: %s", unguarded.firstError()).isZero();
        assertThat(guarded.errors()).as("unexpected failures: %s", guarded.firstError()).isZero();

        assertThat(unguarded.oversold()).as("lost updates without the lock").isPositive();
        assertThat(unguarded.sold()).isGreaterThan(settings.initialStock());

        assertThat(guarded.oversold()).isZero();
        assertThat(guarded.sold() + guarded.finalStock()).isEqualTo(settings.initialStock());
        // Requests that waited out the lock (possible on a loaded machine) are rejected,
        // not sold; either
        // way every request is accounted for and the stock is never oversold.
        assertThat(guarded.sold() + guarded.soldOut() + guarded.rejected()).isEqualTo(settings.requests());
        if (guarded.rejected() == 0) {
            assertThat(guarded.sold()).isEqualTo(settings.initialStock());
            assertThat(guarded.finalStock()).isZero();
        }

        System.out.println(report.toTable());
        assertThat(report.toTable()).contains("| unguarded |", "| guarded   |", "oversold = sold + final stock");
    }

    @Test
    void instanceSettingsOverrideApplicationPropertiesButNotTheCommandLine() {
        try (ConfigurableApplicationContext instance = OversellDemo.startInstance("instance-x",
                "--spring.data.redis.port=" + redis.port(), "--spring.data.redis.client-name=chosen")) {
            Environment environment = instance.getEnvironment();

            // application.properties says 2s and lock-sample-app; the demo needs the
            // longer wait and its own names.
            assertThat(environment.getProperty("sample.stock.lock-wait-time")).isEqualTo("10s");
            assertThat(environment.getProperty("spring.application.name")).isEqualTo("instance-x");
            assertThat(environment.getProperty(EmbeddedRedisInitializer.MODE_PROPERTY)).isEqualTo("never");
            // A demo setting the user passes explicitly wins.
            assertThat(environment.getProperty("spring.data.redis.client-name")).isEqualTo("chosen");
        }
    }

}
