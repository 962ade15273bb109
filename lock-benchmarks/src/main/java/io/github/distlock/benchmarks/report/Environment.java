package io.github.distlock.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.SpringBootVersion;

import io.github.distlock.testsupport.RedisServerBinary;

/**
 * The machine and the versions the numbers belong to. Library versions come from the jar
 * each class was loaded from, so the page states what actually ran, not what a pom asked
 * for.
 */
final class Environment {

    private static final Pattern JAR_VERSION = Pattern.compile("-(\\d[\\w.\\-]*?)\\.jar$");

    private Environment() {
    }

    static Map<String, String> machine() {
        Map<String, String> machine = new LinkedHashMap<>();
        machine.put("CPU", cpuModel());
        machine.put("cores (available to the JVM)", Integer.toString(Runtime.getRuntime().availableProcessors()));
        machine.put("memory", memory());
        machine.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                + System.getProperty("os.arch") + ")");
        machine.put("JVM", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        return machine;
    }

    static Map<String, String> versions(String jmhVersion) {
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("ours (distributed-lock)", jarVersion(io.github.distlock.LockService.class));
        versions.put("Spring Boot", SpringBootVersion.getVersion());
        versions.put("Spring Data Redis", jarVersion(org.springframework.data.redis.core.StringRedisTemplate.class));
        versions.put("Lettuce", jarVersion(io.lettuce.core.RedisClient.class));
        versions.put("Redisson", jarVersion(org.redisson.Redisson.class));
        versions.put("Spring Integration Redis",
                jarVersion(org.springframework.integration.redis.util.RedisLockRegistry.class));
        versions.put("Netty", jarVersion(io.netty.channel.Channel.class));
        versions.put("JMH", jmhVersion);
        versions.put("HdrHistogram", jarVersion(org.HdrHistogram.Histogram.class));
        versions.put("redis-server", redisVersion());
        return versions;
    }

    static String jarVersion(Class<?> type) {
        try {
            String location = type.getProtectionDomain().getCodeSource().getLocation().getPath();
            Matcher matcher = JAR_VERSION.matcher(location);
            if (matcher.find()) {
                return matcher.group(1);
            }
            // A reactor build puts the module's classes directory on the class path, not
            // a jar.
            String declared = type.getPackage().getImplementationVersion();
            return declared != null ? declared : "(classes directory of this build)";
        }
        catch (RuntimeException ex) {
            return "?";
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        }
        catch (IOException | RuntimeException ex) {
            // Not Linux: fall through.
        }
        return System.getProperty("os.arch");
    }

    private static String memory() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    long kib = Long.parseLong(line.replaceAll("\\D+", ""));
                    return String.format(java.util.Locale.ROOT, "%.1f GiB", kib / 1024.0 / 1024.0);
                }
            }
        }
        catch (IOException | RuntimeException ex) {
            // Not Linux: fall through.
        }
        return "?";
    }

    private static String redisVersion() {
        try {
            Process process = new ProcessBuilder(List.of(RedisServerBinary.resolve().toString(), "--version"))
                .redirectErrorStream(true)
                .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            process.waitFor(10, TimeUnit.SECONDS);
            Matcher matcher = Pattern.compile("v=(\\S+)").matcher(output);
            return matcher.find() ? matcher.group(1) : output;
        }
        catch (IOException | RuntimeException ex) {
            return "?";
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

}
