package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/** A native image keeps every Lua script the backends load. */
class DistributedLockRuntimeHintsTest {

    @Test
    void everyLuaScriptIsKeptInANativeImage() throws IOException {
        RuntimeHints hints = new RuntimeHints();
        new DistributedLockRuntimeHints().registerHints(hints, getClass().getClassLoader());

        Resource[] scripts = new PathMatchingResourcePatternResolver()
                .getResources("classpath*:io/github/distlock/redis/*.lua");
        assertThat(scripts).extracting(Resource::getFilename).contains("acquire.lua", "release.lua", "renew.lua",
                "cancel.lua", "fence.lua", "fencing.lua", "raise_fence.lua");
        Arrays.stream(scripts).forEach(script -> assertThat(RuntimeHintsPredicates.resource()
                .forResource("io/github/distlock/redis/" + script.getFilename())).as(script.getFilename())
                .accepts(hints));
        assertThat(RuntimeHintsPredicates.resource().forResource("io/github/distlock/other.txt")).rejects(hints);
    }
}
