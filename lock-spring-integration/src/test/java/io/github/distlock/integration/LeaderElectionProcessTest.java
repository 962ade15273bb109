package io.github.distlock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.RedisTestServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election with Spring Integration's {@code LockRegistryLeaderInitiator} on this
 * registry, across three application instances, each a JVM of its own
 * ({@link LeaderElectionApp}), on one real Redis, with a 2 s ttl:
 * <ol>
 * <li>exactly one instance is leader;</li>
 * <li>{@code kill -9} of the leader: another takes over within the ttl plus a
 * margin;</li>
 * <li>{@code SIGSTOP} of the new leader past its lease: a third takes over; resumed, the
 * paused one is told (the lost-lease event and the revocation), and its late writes carry
 * the smaller token and are refused by the fenced resource.</li>
 * </ol>
 * Throughout, the resource takes writes in token order only, and each token it took
 * belongs to the instance that was granted it. The figures (takeover time, leaders
 * counted) are printed.
 */
class LeaderElectionProcessTest {

    private static final Duration TTL = Duration.ofSeconds(2);

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final List<Instance> instances = new ArrayList<>();

    private final List<Event> events = new CopyOnWriteArrayList<>();

    private RedisTestServer redis;

    @AfterEach
    void stop() {
        for (Instance instance : this.instances) {
            resume(instance.process);
            instance.process.destroyForcibly();
        }
        if (this.redis != null) {
            this.redis.close();
        }
    }

    @Test
    void oneLeaderAtATimeThroughAKillAndAPause() throws Exception {
        this.redis = RedisTestServer.start();
        for (int i = 1; i <= 3; i++) {
            this.instances.add(start("app-" + i));
        }
        await().atMost(PATIENCE)
            .until(() -> this.instances.stream().allMatch((instance) -> seen("READY", instance.id)));

        // 1. One leader.
        Event first = await().atMost(PATIENCE).until(() -> firstOf("GRANTED", null), (event) -> event != null);
        Thread.sleep(3 * TTL.toMillis());
        assertThat(all("GRANTED")).as("one leader while nothing fails").hasSize(1);

        // 2. kill -9 the leader.
        Instance killed = instance(first.id);
        long killedAt = System.currentTimeMillis();
        killed.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Event second = await().atMost(PATIENCE)
            .until(() -> firstOf("GRANTED", (event) -> event.time >= killedAt), (event) -> event != null);
        long takeoverMillis = second.time - killedAt;
        assertThat(second.id).isNotEqualTo(first.id);
        assertThat(second.token).isGreaterThan(first.token);
        assertThat(takeoverMillis).as("takeover within the ttl plus a margin").isLessThan(TTL.toMillis() + 5_000);

        // 3. SIGSTOP the new leader past its lease, then resume it.
        Instance paused = instance(second.id);
        long pausedAt = System.currentTimeMillis();
        signal("STOP", paused.process);
        Event third = await().atMost(PATIENCE)
            .until(() -> firstOf("GRANTED", (event) -> event.time >= pausedAt), (event) -> event != null);
        assertThat(third.id).isNotEqualTo(second.id).isNotEqualTo(first.id);
        assertThat(third.token).isGreaterThan(second.token);
        Thread.sleep(1_000);
        long resumedAt = System.currentTimeMillis();
        signal("CONT", paused.process);
        await().atMost(PATIENCE).until(() -> seenAfter("REVOKED", paused.id, resumedAt));
        await().atMost(PATIENCE).until(() -> seenAfter("LOST", paused.id, resumedAt));
        Thread.sleep(TTL.toMillis());

        // The resource took writes in token order only, each from the instance granted
        // that token.
        Map<Long, String> grantedTo = new ConcurrentHashMap<>();
        all("GRANTED").forEach((event) -> grantedTo.put(event.token, event.id));
        List<String> taken = this.redis.command("LRANGE", LeaderElectionApp.WRITES_KEY, "0",
                "-1") instanceof List<?> list ? list.stream().map(String::valueOf).toList() : List.of();
        assertThat(taken).isNotEmpty();
        long lastToken = 0;
        for (String write : taken) {
            String[] parts = write.split(" ");
            long token = Long.parseLong(parts[1]);
            assertThat(token).as("writes taken in token order").isGreaterThanOrEqualTo(lastToken);
            assertThat(grantedTo.get(token)).as("token %d written by its leader", token).isEqualTo(parts[0]);
            lastToken = token;
        }
        List<Event> lateWrites = this.events.stream()
            .filter((event) -> event.type.equals("WRITE") && event.id.equals(paused.id) && event.time >= resumedAt)
            .toList();
        assertThat(lateWrites).as("the resumed leader's late writes were refused")
            .allMatch((event) -> !event.args.endsWith("accepted"));
        assertThat(all("GRANTED").stream().filter((event) -> event.time >= resumedAt).toList())
            .as("no new leader after the resume")
            .isEmpty();

        System.out.printf(
                "leader election: takeover after kill -9 %d ms (ttl %d ms); leaders over the run %d (%s); "
                        + "late writes of the resumed leader refused: %d%n",
                takeoverMillis, TTL.toMillis(), all("GRANTED").size(),
                all("GRANTED").stream().map((event) -> event.id + "#" + event.token).toList(), lateWrites.size());
    }

    private Instance start(String id) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process process = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classPath,
                LeaderElectionApp.class.getName(), id, "spring.data.redis.host=" + this.redis.host(),
                "spring.data.redis.port=" + this.redis.port(), "distributed-lock.default-ttl=" + TTL.toMillis() + "ms",
                "logging.level.root=WARN")
            .redirectErrorStream(true)
            .start();
        Thread reader = new Thread(() -> read(process), "leader-output-" + id);
        reader.setDaemon(true);
        reader.start();
        return new Instance(id, process);
    }

    private void read(Process process) {
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                Event event = Event.parse(line);
                if (event != null) {
                    this.events.add(event);
                }
            }
        }
        catch (IOException ex) {
            // the process ended
        }
    }

    private Instance instance(String id) {
        return this.instances.stream().filter((instance) -> instance.id.equals(id)).findFirst().orElseThrow();
    }

    private List<Event> all(String type) {
        return this.events.stream().filter((event) -> event.type.equals(type)).toList();
    }

    private Event firstOf(String type, java.util.function.Predicate<Event> filter) {
        return this.events.stream()
            .filter((event) -> event.type.equals(type) && (filter == null || filter.test(event)))
            .findFirst()
            .orElse(null);
    }

    private boolean seen(String type, String id) {
        return this.events.stream().anyMatch((event) -> event.type.equals(type) && event.id.equals(id));
    }

    private boolean seenAfter(String type, String id, long time) {
        return this.events.stream()
            .anyMatch((event) -> event.type.equals(type) && event.id.equals(id) && event.time >= time);
    }

    private static void signal(String signal, Process process) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
    }

    private static void resume(Process process) {
        if (process.isAlive()) {
            try {
                signal("CONT", process);
            }
            catch (IOException | InterruptedException ex) {
                // destroyed next anyway
            }
        }
    }

    private record Instance(String id, Process process) {
    }

    /** One line of an instance's output: {@code <ms> <TYPE> [args] <id>}. */
    private record Event(long time, String type, String args, String id, long token) {

        static Event parse(String line) {
            String[] parts = line.trim().split(" ");
            if (parts.length < 3 || !parts[0].chars().allMatch(Character::isDigit)
                    || !parts[1].chars().allMatch(Character::isUpperCase)) {
                return null;
            }
            String args = String.join(" ", List.of(parts).subList(2, parts.length - 1));
            long token = (parts.length > 3 && parts[2].chars().allMatch(Character::isDigit)) ? Long.parseLong(parts[2])
                    : 0;
            return new Event(Long.parseLong(parts[0]), parts[1], args, parts[parts.length - 1], token);
        }

    }

}
