package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.ClassUtils;

/**
 * A native image keeps every Lua script the backends load, and what is looked up by name.
 */
class DistributedLockRuntimeHintsTest {

    @Test
    void everyLuaScriptIsKeptInANativeImage() throws IOException {
        RuntimeHints hints = new RuntimeHints();
        new DistributedLockRuntimeHints().registerHints(hints, getClass().getClassLoader());

        Resource[] scripts = new PathMatchingResourcePatternResolver()
            .getResources("classpath*:io/github/distlock/redis/*.lua");
        assertThat(scripts).extracting(Resource::getFilename)
            .contains("acquire.lua", "release.lua", "renew.lua", "cancel.lua", "fence.lua", "fencing.lua",
                    "raise_fence.lua");
        Arrays.stream(scripts)
            .forEach(script -> assertThat(
                    RuntimeHintsPredicates.resource().forResource("io/github/distlock/redis/" + script.getFilename()))
                .as(script.getFilename())
                .accepts(hints));
        assertThat(RuntimeHintsPredicates.resource().forResource("io/github/distlock/other.txt")).rejects(hints);
    }

    @Test
    void theReflectiveLookUpsAreKeptInANativeImage() {
        RuntimeHints hints = new RuntimeHints();
        new DistributedLockRuntimeHints().registerHints(hints, getClass().getClassLoader());

        // The woven aspect's aspectOf(), which AspectJ mode reaches through
        // Aspects.aspectOf.
        assertThat(hints.reflection()
            .getTypeHint(TypeReference.of("io.github.distlock.aop.AnnotationDistributedLockAspect"))).isNotNull()
            .satisfies(type -> assertThat(type.methods()).extracting(method -> method.getName())
                .contains("aspectOf", "hasAspect"));
        // Jedis 7's RedisClusterClient.getClusterNodes() only where that class exists:
        // this build's Jedis decides.
        boolean jedis7 = ClassUtils.isPresent("redis.clients.jedis.RedisClusterClient", getClass().getClassLoader());
        assertThat(hints.reflection().getTypeHint(TypeReference.of("redis.clients.jedis.RedisClusterClient")) != null)
            .isEqualTo(jedis7);
    }

}
