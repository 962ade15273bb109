package io.github.distlock.benchmarks.harness;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;

/**
 * One JVM of scenario 5, driven line by line through stdin by {@link ProcessesScenario}:
 * {@code PREPARE <implementation>} opens one client (shared by this process's threads,
 * like one application instance) and answers {@link Forks#READY}; {@code GO} runs the
 * contended loop on the shared key and answers {@link Forks#RESULT}; {@code EXIT} ends
 * the JVM. The processes start each window on the same {@code GO}, so they contend for
 * its whole length.
 */
public final class ProcessesWorker {

    /** Prefix of the line that reports a failed command. */
    static final String FAILED = "@@FAILED ";

    private ProcessesWorker() {
    }

    /**
     * @param args
     * {@code --port --wait-time --file --index --threads --warmup --measure --key}
     * @throws Exception if anything fails; the parent sees the exit code and the output
     */
    public static void main(String[] args) throws Exception {
        Arguments arguments = Arguments.parse(args);
        RedisTarget target = new RedisTarget("127.0.0.1", arguments.integer("port", 0),
                arguments.duration("wait-time", RedisTarget.DEFAULT_WAIT));
        int index = arguments.integer("index", 0);
        int threads = arguments.integer("threads", 8);
        Duration warmup = arguments.duration("warmup", Duration.ofSeconds(3));
        Duration measure = arguments.duration("measure", Duration.ofSeconds(15));
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (MappedResource resource = new MappedResource(Path.of(arguments.string("file", "")))) {
            LockAdapter adapter = null;
            String implementation = null;
            String line;
            while ((line = commands.readLine()) != null) {
                try {
                    if (line.startsWith("PREPARE ")) {
                        implementation = line.substring("PREPARE ".length()).trim();
                        adapter = Implementation.valueOf(implementation).open(target);
                        Adapters.prime(adapter);
                        System.out.println(Forks.READY);
                    }
                    else if (line.startsWith("GO ")) {
                        String key = line.substring("GO ".length()).trim();
                        // Owner ids 1000 apart: unique across processes, so a handoff
                        // between them counts.
                        ContendedRun.Outcome outcome = ContendedRun.run(Collections.nCopies(threads, adapter), key,
                                resource, 1000L * index, warmup, measure, target.waitTime());
                        Adapters.closeAll(List.of(adapter));
                        adapter = null;
                        // The counter is shared; the parent computes violations over all
                        // processes.
                        System.out.println(
                                Forks.RESULT + Json.line(ContendedResult.of(implementation, "processes", outcome, -1)));
                    }
                    else if (line.equals("EXIT")) {
                        break;
                    }
                }
                catch (RuntimeException ex) {
                    // Reported instead of ending the JVM, so the parent can name the
                    // implementation that broke.
                    ex.printStackTrace(System.out);
                    System.out.println(FAILED + ex);
                }
                System.out.flush();
            }
            if (adapter != null) {
                adapter.close();
            }
        }
        System.out.flush();
        System.exit(0);
    }

}
