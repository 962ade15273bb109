package io.github.distlock.autoconfigure;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a GraalVM native image of an application must keep for the starter: the Lua scripts, which
 * are read from the classpath at runtime. (Binding {@code distributed-lock.*} needs no hint of its
 * own: Spring Boot's AOT processing covers {@code @ConfigurationProperties}.)
 *
 * <pre>{@code
 * ./mvnw -Pnative native:compile   // the scripts are in the image
 * }</pre>
 */
class DistributedLockRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.resources().registerPattern("io/github/distlock/redis/*.lua");
    }
}
