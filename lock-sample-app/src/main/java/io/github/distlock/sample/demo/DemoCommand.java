package io.github.distlock.sample.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.distlock.sample.redis.EmbeddedRedis;

import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * {@code --demo} runs every demo, {@code --demo=<name>} one of them: each walks through
 * one problem of distributed locking on embedded infrastructure, prints a small table and
 * a one-line verdict.
 *
 * <ul>
 * <li>{@code oversell}: two instances sell from one stock, without and with the lock
 * ({@link OversellDemo});</li>
 * <li>{@code hot-item}: one SKU under heavy load, its stock in one segment and in
 * several, each with its own lock ({@link HotItemDemo});</li>
 * <li>{@code paused-holder}: a holder's JVM is stopped past its lease, another takes
 * over, the first wakes and writes, without and with a fencing check in the database
 * ({@link PausedHolderDemo});</li>
 * <li>{@code failover}: a master fails over to a replica that missed the lock, without
 * and with replica acknowledgements ({@link FailoverDemo});</li>
 * <li>{@code scheduled}: three instances schedule one report every second, one runs it
 * per period ({@link ScheduledDemo}).</li>
 * </ul>
 *
 * <p>
 * Unless a Redis address is given ({@code --spring.data.redis.host}, {@code .port},
 * {@code .url}, or the matching environment variables) the demos start a private embedded
 * redis-server on a free port and never touch a Redis that may already run on
 * localhost:6379. The failover demo always starts its own master and replica.
 */
public final class DemoCommand {

    /** The command-line option: {@code --demo} or {@code --demo=<name>}. */
    public static final String OPTION = "demo";

    /** The names {@code --demo=<name>} accepts, in the order {@code --demo} runs them. */
    public static final List<String> NAMES = List.of(OversellDemo.NAME, HotItemDemo.NAME, PausedHolderDemo.NAME,
            FailoverDemo.NAME, ScheduledDemo.NAME);

    private static final List<String> REDIS_ADDRESS_PROPERTIES = List.of("spring.data.redis.url",
            "spring.data.redis.host", "spring.data.redis.port", "spring.data.redis.sentinel.master",
            "spring.data.redis.cluster.nodes");

    /** What a demo gets from the command. */
    interface Demo {

        /**
         * Runs the demo, printing its table and verdict to {@code out}.
         * @param out where the output goes
         * @param given the command line and environment, for the demo's own settings
         * @param instanceArgs the user's arguments plus the address of the shared Redis
         * @return the exit status: 0 when the demo showed what it claims
         */
        int run(PrintStream out, StandardEnvironment given, String[] instanceArgs);

    }

    private DemoCommand() {
    }

    /** Whether the arguments ask for a demo ({@code --demo} or {@code --demo=<name>}). */
    public static boolean requested(String[] args) {
        return Arrays.stream(args).anyMatch(DemoCommand::isDemoOption);
    }

    /**
     * Runs the demos the arguments name and returns the exit status.
     * @param args the application's arguments; the demo option is dropped, everything
     * else (for example {@code --sample.demo.requests=500}) reaches the demos'
     * application instances
     * @param out where the tables go
     * @return 0 if every demo showed what it claims, 2 for an unknown demo name, else 1
     */
    public static int run(String[] args, PrintStream out) {
        List<String> selected;
        try {
            selected = selected(args);
        }
        catch (IllegalArgumentException e) {
            out.println(e.getMessage());
            return 2;
        }
        StandardEnvironment given = new StandardEnvironment();
        given.getPropertySources()
            .addFirst(new SimpleCommandLinePropertySource(
                    Arrays.stream(args).filter(arg -> !isDemoOption(arg)).toArray(String[]::new)));
        List<String> instanceArgs = new ArrayList<>(Arrays.stream(args).filter(arg -> !isDemoOption(arg)).toList());

        // Only an address the user passed explicitly counts: the demo must never fall
        // back to localhost:6379,
        // which may be a Redis that other people use.
        boolean needsSharedRedis = selected.stream().anyMatch(name -> !name.equals(FailoverDemo.NAME));
        boolean addressGiven = REDIS_ADDRESS_PROPERTIES.stream().anyMatch(given::containsProperty);
        EmbeddedRedis embedded = null;
        int status = 0;
        try {
            if (needsSharedRedis && addressGiven) {
                out.println("Using the Redis given on the command line or in the environment.");
            }
            else if (needsSharedRedis) {
                embedded = EmbeddedRedis.start();
                instanceArgs.add("--spring.data.redis.host=" + EmbeddedRedis.HOST);
                instanceArgs.add("--spring.data.redis.port=" + embedded.port());
                out.printf(
                        "No Redis address given: started a private embedded redis-server on %s:%d for the demos "
                                + "(pass --spring.data.redis.host/--spring.data.redis.port to use another Redis).%n",
                        EmbeddedRedis.HOST, embedded.port());
            }
            Map<String, Demo> demos = demos();
            for (String name : selected) {
                out.printf("%n== %s ==%n%n", name);
                try {
                    status = Math.max(status, demos.get(name).run(out, given, instanceArgs.toArray(String[]::new)));
                }
                catch (RuntimeException e) {
                    out.println("The " + name + " demo failed: " + e);
                    e.printStackTrace(out);
                    status = 1;
                }
            }
            return status;
        }
        finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /** The demo names the arguments select; package-private for the tests. */
    static List<String> selected(String[] args) {
        List<String> selected = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals("--" + OPTION)) {
                selected.addAll(NAMES);
            }
            else if (arg.startsWith("--" + OPTION + "=")) {
                String name = arg.substring(OPTION.length() + 3).trim();
                if (!NAMES.contains(name)) {
                    throw new IllegalArgumentException("Unknown demo '" + name + "' in " + arg + ". The demos are: "
                            + String.join(", ", NAMES) + ". Use --demo to run them all, or --demo=<name> for one, "
                            + "for example --demo=" + NAMES.get(1) + ".");
                }
                selected.add(name);
            }
        }
        return selected.stream().distinct().toList();
    }

    private static Map<String, Demo> demos() {
        Map<String, Demo> demos = new LinkedHashMap<>();
        demos.put(OversellDemo.NAME, OversellDemo::runCommand);
        demos.put(HotItemDemo.NAME, HotItemDemo::runCommand);
        demos.put(PausedHolderDemo.NAME, PausedHolderDemo::runCommand);
        demos.put(FailoverDemo.NAME, FailoverDemo::runCommand);
        demos.put(ScheduledDemo.NAME, ScheduledDemo::runCommand);
        return demos;
    }

    private static boolean isDemoOption(String arg) {
        return arg.equals("--" + OPTION) || arg.startsWith("--" + OPTION + "=");
    }

}
