package io.github.distlock.testsupport;

import java.util.List;
import java.util.Locale;

/**
 * One command a client sent through a {@link RedisFaultProxy}, as Redis sees it: its
 * argv.
 *
 * <p>
 * Positions follow Redis's own argv and {@code COMMAND INFO}: 0 is the command name, 1
 * the first argument. For {@code SET lock:{a} token NX PX 30000}, {@code argument(1)} is
 * the key {@code lock:{a}}. Arguments are decoded as UTF-8 (binary values become
 * replacement characters, which is enough to match keys and script SHAs).
 *
 * <pre>{@code
 * RedisCommandMatcher.named("EVALSHA").matching(command -> command.argument(1).equals(releaseSha));
 * }</pre>
 */
public final class RedisCommand {

    private final List<String> argv;

    RedisCommand(List<String> argv) {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("a command has at least its name");
        }
        this.argv = List.copyOf(argv);
    }

    /**
     * The command name in upper case, e.g. {@code "SET"}; for a subcommand such as
     * {@code CLIENT SETINFO}, only the first word.
     * @return the name
     */
    public String name() {
        return argv.get(0).toUpperCase(Locale.ROOT);
    }

    /**
     * One word of the argv.
     * @param position 0 for the name, 1 for the first argument
     * @return the word, or null when the command has fewer words
     */
    public String argument(int position) {
        return position >= 0 && position < argv.size() ? argv.get(position) : null;
    }

    /**
     * Every word, name first, as the client sent them.
     * @return an unmodifiable list
     */
    public List<String> argv() {
        return argv;
    }

    /**
     * The words joined by spaces, as in {@code MONITOR} or a test failure message.
     * @return e.g. {@code SET k v NX PX 30000}
     */
    @Override
    public String toString() {
        return String.join(" ", argv);
    }

}
