package io.github.distlock.benchmarks.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Scenario 5: several JVMs ({@link ProcessesWorker}), each with several threads on one
 * client, on ONE key, with the counter in a memory-mapped file all of them share. This
 * process only coordinates: it starts the workers once, then for each implementation
 * resets the counter, has every worker open its client, starts them together and merges
 * what they report.
 */
public final class ProcessesScenario implements AutoCloseable {

    private final List<Worker> workers = new ArrayList<>();

    private final MappedResource resource;

    private final Path file;

    private final Duration warmup;

    private final Duration measure;

    private final Duration waitTime;

    /**
     * Starts the worker JVMs.
     * @param server the server they contend on
     * @param processes how many JVMs
     * @param threads threads per JVM
     * @param warmup warm-up before each window
     * @param measure the window
     * @param waitTime how long an acquisition may wait
     */
    public ProcessesScenario(RedisTestServer server, int processes, int threads, Duration warmup, Duration measure,
            Duration waitTime) {
        this.warmup = warmup;
        this.measure = measure;
        this.waitTime = waitTime;
        try {
            file = Files.createTempFile("bench-counter-", ".bin");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        resource = new MappedResource(file);
        for (int i = 0; i < processes; i++) {
            workers.add(new Worker(Forks.start(ProcessesWorker.class,
                    List.of("--port=" + server.port(), "--wait-time=" + waitTime.toMillis() + "ms", "--file=" + file,
                            "--index=" + i, "--threads=" + threads, "--warmup=" + warmup.toMillis() + "ms",
                            "--measure=" + measure.toMillis() + "ms"))));
        }
    }

    /**
     * Runs one implementation in all worker JVMs at once.
     * @param implementation what to measure
     * @return the merged result; violations compare the shared counter with all
     * acquisitions
     */
    public ContendedResult run(Implementation implementation) {
        resource.reset();
        Duration setup = Duration.ofMinutes(2);
        for (Worker worker : workers) {
            worker.send("PREPARE " + implementation.name());
        }
        for (Worker worker : workers) {
            worker.await(Forks.READY, setup);
        }
        String key = "bench:processes:" + UUID.randomUUID();
        for (Worker worker : workers) {
            worker.send("GO " + key);
        }
        Duration limit = warmup.plus(measure).plus(waitTime).plusMinutes(1);
        List<ContendedResult> parts = new ArrayList<>();
        for (Worker worker : workers) {
            parts.add(Json.read(worker.await(Forks.RESULT, limit), ContendedResult.class));
        }
        // Every worker has reported, so none writes the file any more.
        return ContendedResult.merge(implementation.name(), parts, resource.counter());
    }

    @Override
    public void close() {
        for (Worker worker : workers) {
            worker.stop();
        }
        resource.close();
        try {
            Files.deleteIfExists(file);
        }
        catch (IOException ignored) {
            // A temp file left behind is harmless.
        }
    }

    /**
     * One worker JVM: commands go to its stdin; protocol lines from its stdout land in a
     * queue.
     */
    private static final class Worker {

        private final Process process;

        private final Writer input;

        private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();

        Worker(Process process) {
            this.process = process;
            this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread pump = new Thread(this::pump, "worker-output-" + process.pid());
            pump.setDaemon(true);
            pump.start();
        }

        private void pump() {
            try (BufferedReader output = Forks.reader(process)) {
                String line;
                while ((line = output.readLine()) != null) {
                    if (line.startsWith(Forks.READY) || line.startsWith(Forks.RESULT)
                            || line.startsWith(ProcessesWorker.FAILED)) {
                        replies.add(line);
                    }
                    else {
                        Forks.echo(ProcessesWorker.class, line);
                    }
                }
            }
            catch (IOException ignored) {
                // The process ended; await() reports it.
            }
            replies.add("@@EXITED");
        }

        void send(String command) {
            try {
                input.write(command + "\n");
                input.flush();
            }
            catch (IOException ex) {
                throw new IllegalStateException("worker pid " + process.pid() + " is gone", ex);
            }
        }

        String await(String prefix, Duration timeout) {
            try {
                String reply = replies.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
                if (reply == null || !reply.startsWith(prefix)) {
                    throw new IllegalStateException("worker pid " + process.pid() + " answered "
                            + (reply == null ? "nothing within " + timeout : reply) + " instead of " + prefix.trim());
                }
                return reply.substring(prefix.length());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", ex);
            }
        }

        void stop() {
            try {
                send("EXIT");
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
            catch (RuntimeException ex) {
                process.destroyForcibly();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }

    }

}
