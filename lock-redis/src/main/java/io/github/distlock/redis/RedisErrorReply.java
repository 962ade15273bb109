package io.github.distlock.redis;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An error that a Redis server answered with ({@code WRONGPASS ...}, {@code NOAUTH ...},
 * {@code NOPERM ...}), dug out of a client's exception, and what it means for the lock in
 * plain words: which setting to check, or which ACL permission to grant.
 *
 * <p>
 * Drivers wrap the reply: Lettuce's connect failure ("Unable to connect to
 * 127.0.0.1/&lt;unresolved&gt;:6379") hides a {@code RedisCommandExecutionException} for
 * the {@code WRONGPASS}, Jedis's pool a {@code JedisAccessControlException}, and Spring
 * Data translates either once more. The reply is found by the driver's exception type (by
 * name, so that neither driver has to be on the class path), never by Spring's wording.
 *
 * <pre>{@code
 * String advice = RedisErrorReply.in(ex)
 *         .map(reply -> reply.explain(RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS))
 *         .orElse(ex.getMessage());
 * }</pre>
 *
 * @param text the server's reply as the driver reports it, for example
 * {@code WRONGPASS invalid username-password pair or user is disabled.}
 */
public record RedisErrorReply(String text) {

    /**
     * Where an application on Spring Boot's connection factory sets the credentials, for
     * messages.
     */
    public static final String SPRING_DATA_REDIS_CREDENTIALS = "spring.data.redis.password (and "
            + "spring.data.redis.username for an ACL user, or both in spring.data.redis.url as "
            + "redis://user:password@host:port)";

    /** The guide's section with the permissions the lock needs. */
    public static final String MINIMAL_ACL = "the \"Minimal ACL\" section of docs/guide.md (#minimal-acl)";

    /**
     * The drivers' types for an error reply: Lettuce's, and Jedis's
     * ({@code JedisAccessControlException} for {@code WRONGPASS}, {@code NOAUTH} and
     * {@code NOPERM} is one of its subtypes).
     */
    private static final Set<String> ERROR_REPLY_TYPES = Set.of("io.lettuce.core.RedisCommandExecutionException",
            "redis.clients.jedis.exceptions.JedisDataException");

    /**
     * A command named by the reply itself:
     * {@code ... no permissions to run the 'evalsha' command}.
     */
    private static final Pattern NAMED_COMMAND = Pattern.compile("permissions to run the '([^']+)' command");

    /**
     * Where in which script the reply arose:
     * {@code script: <sha1>, on @user_script:<line>.}
     */
    private static final Pattern SCRIPT_LINE = Pattern.compile("script: ([0-9a-fA-F]{40}), on @user_script:(\\d+)");

    /**
     * The error reply among {@code failure} and its causes: the innermost, which is the
     * server's own text rather than a wrapper's.
     * @return the reply, or empty if the failure is not an error reply (a timeout, a
     * refused connection)
     */
    public static Optional<RedisErrorReply> in(Throwable failure) {
        RedisErrorReply found = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (isErrorReply(t.getClass()) && t.getMessage() != null) {
                found = new RedisErrorReply(t.getMessage().trim());
            }
        }
        return Optional.ofNullable(found);
    }

    /**
     * Any failure of a Redis call in plain words: an error reply {@link #explain
     * explained}, otherwise the messages along the cause chain (so that "Unable to
     * connect" says why: "Connection refused").
     * @param credentials where the credentials are set, for example
     * {@link #SPRING_DATA_REDIS_CREDENTIALS}
     */
    public static String describe(Throwable failure, String credentials) {
        Optional<RedisErrorReply> reply = in(failure);
        if (reply.isPresent()) {
            return reply.get().explain(credentials);
        }
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && !message.isBlank() && text.indexOf(message) < 0) {
                text.append(text.isEmpty() ? "" : ": ").append(message);
            }
        }
        return text.isEmpty() ? failure.getClass().getName() : text.toString();
    }

    /**
     * The error code, the reply's first word: {@code WRONGPASS}, {@code NOAUTH},
     * {@code NOPERM}, {@code ERR}...
     */
    public String code() {
        int space = text.indexOf(' ');
        return space < 0 ? text : text.substring(0, space);
    }

    /**
     * What the reply means for the lock and how to fix it, quoting the reply; for a reply
     * this does not know, the reply itself.
     * @param credentials where the credentials are set, for example
     * {@link #SPRING_DATA_REDIS_CREDENTIALS}
     */
    public String explain(String credentials) {
        String code = code();
        if (code.equals("WRONGPASS") || (code.equals("ERR") && text.contains("invalid password"))) {
            return "Redis refused the user name or password (" + text + "). Check " + credentials + ".";
        }
        if (code.equals("NOAUTH")) {
            return "Redis requires a password, and none was sent (" + text + "). Set " + credentials + ".";
        }
        if (!code.equals("NOPERM") && !text.contains("The user executing the script can't")) {
            return text;
        }
        List<String> commands = deniedCommands();
        if (!commands.isEmpty()) {
            return "The Redis user may not run '" + String.join("' or '", commands) + "', which the lock needs"
                    + where() + " (" + text + "). Grant it with ACL SETUSER <user> +" + String.join(" +", commands)
                    + "; every command the lock needs is in " + MINIMAL_ACL + ".";
        }
        if (text.contains("keys")) {
            return "The Redis user may not access the lock's keys (" + text + "). Allow them with a key pattern"
                    + " for distributed-lock.key-prefix, for example ~lock:*; see " + MINIMAL_ACL + ".";
        }
        if (text.contains("channel")) {
            return "The Redis user may not use the lock's release channel (" + text + "). Allow it with a channel"
                    + " pattern for distributed-lock.key-prefix, for example &lock:*; see " + MINIMAL_ACL + ".";
        }
        return "The Redis user may not run a command the lock needs (" + text + "). Grant the commands of "
                + MINIMAL_ACL + ".";
    }

    /**
     * The commands the reply says were refused: named in the reply itself, or, for a
     * refusal inside a script that does not name it (Redis 7.0), read from our script's
     * line that the reply points at.
     */
    List<String> deniedCommands() {
        Matcher named = NAMED_COMMAND.matcher(text);
        if (named.find()) {
            return List.of(named.group(1).toLowerCase(Locale.ROOT));
        }
        Matcher line = SCRIPT_LINE.matcher(text);
        if (line.find() && text.contains("can't run this command")) {
            return LuaScript.bySha1(line.group(1))
                .map(script -> script.commandsOnLine(Integer.parseInt(line.group(2))))
                .orElse(List.of());
        }
        return List.of();
    }

    /**
     * ", in acquire.lua line 18" for a refusal inside one of our scripts, else nothing.
     */
    private String where() {
        Matcher line = SCRIPT_LINE.matcher(text);
        if (!line.find()) {
            return "";
        }
        return LuaScript.bySha1(line.group(1))
            .map(script -> " (in " + script + ", line " + line.group(2) + ")")
            .orElse("");
    }

    private static boolean isErrorReply(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (ERROR_REPLY_TYPES.contains(c.getName())) {
                return true;
            }
        }
        return false;
    }
}
