package io.github.distlock.autoconfigure;

import java.util.List;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What a GraalVM native image of an application must keep for the starter: the Lua
 * scripts, which are read from the classpath at runtime. (Binding
 * {@code distributed-lock.*} needs no hint of its own: Spring Boot's AOT processing
 * covers {@code @ConfigurationProperties}.)
 *
 * <pre>{@code
 * ./mvnw -Pnative native:compile   // the scripts are in the image
 * }</pre>
 */
class DistributedLockRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.resources().registerPattern("io/github/distlock/redis/*.lua");
        // Jedis 7's cluster client, whose node pools the renewal pipeline reaches by name
        // (it is not
        // on the compile classpath of Jedis 5 and 6 users).
        hints.reflection()
            .registerTypeIfPresent(classLoader, "redis.clients.jedis.RedisClusterClient",
                    type -> type.withMethod("getClusterNodes", List.of(), ExecutableMode.INVOKE));
        // AspectJ mode: Aspects.aspectOf finds the woven aspect's static aspectOf()
        // reflectively.
        hints.reflection()
            .registerType(TypeReference.of("io.github.distlock.aop.AnnotationDistributedLockAspect"),
                    type -> type.withMethod("aspectOf", List.of(), ExecutableMode.INVOKE)
                        .withMethod("hasAspect", List.of(), ExecutableMode.INVOKE));
    }

}
