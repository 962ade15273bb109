package io.github.distlock.testsupport;

import java.util.Locale;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Which commands a {@link FaultRule} applies to: a command name (case-insensitive),
 * optionally narrowed by its arguments. Immutable; every {@code with...} method returns a
 * new matcher.
 *
 * <pre>{@code
 * RedisCommandMatcher.named("SET").withArgument(1, "lock:{order:42}");     // SET of one key
 * RedisCommandMatcher.named("EVALSHA").withArgument(1, releaseScriptSha);  // one script
 * RedisCommandMatcher.anyCommand();
 * }</pre>
 */
public final class RedisCommandMatcher implements Predicate<RedisCommand> {

    private final String description;

    private final Predicate<RedisCommand> predicate;

    private RedisCommandMatcher(String description, Predicate<RedisCommand> predicate) {
        this.description = description;
        this.predicate = predicate;
    }

    /**
     * Commands with this name.
     * @param commandName e.g. {@code "SET"} or {@code "evalsha"}, compared
     * case-insensitively
     * @return the matcher
     */
    public static RedisCommandMatcher named(String commandName) {
        String upper = Objects.requireNonNull(commandName, "commandName").toUpperCase(Locale.ROOT);
        return new RedisCommandMatcher(upper, command -> command.name().equals(upper));
    }

    /**
     * Every command.
     * @return the matcher
     */
    public static RedisCommandMatcher anyCommand() {
        return new RedisCommandMatcher("any command", command -> true);
    }

    /**
     * Narrows to commands with this exact word at this position.
     * @param position as in {@link RedisCommand#argument(int)}: 1 is the first argument
     * (the key of {@code SET}, the SHA of {@code EVALSHA})
     * @param value the expected word, compared exactly
     * @return a new matcher
     */
    public RedisCommandMatcher withArgument(int position, String value) {
        Objects.requireNonNull(value, "value");
        return matching(description + " with argument " + position + " = " + value,
                command -> value.equals(command.argument(position)));
    }

    /**
     * Narrows by any condition on the command, e.g.
     * {@code command -> command.argv().contains("NX")}.
     * @param condition must also hold
     * @return a new matcher
     */
    public RedisCommandMatcher matching(Predicate<RedisCommand> condition) {
        return matching(description + " matching a condition", condition);
    }

    /**
     * Whether the command matches.
     * @param command a command read from a client
     * @return true when every condition holds
     */
    @Override
    public boolean test(RedisCommand command) {
        return predicate.test(command);
    }

    /**
     * What the matcher selects, for failure messages.
     * @return e.g. {@code SET with argument 1 = lock:{a}}
     */
    @Override
    public String toString() {
        return description;
    }

    private RedisCommandMatcher matching(String newDescription, Predicate<RedisCommand> condition) {
        Objects.requireNonNull(condition, "condition");
        return new RedisCommandMatcher(newDescription, predicate.and(condition));
    }

}
