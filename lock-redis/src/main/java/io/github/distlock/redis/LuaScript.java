package io.github.distlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.core.script.DigestUtils;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockKey;

/**
 * A Lua script loaded once from the classpath, with its SHA-1 for {@code EVALSHA}.
 *
 * <p>
 * Spring Data's {@code DefaultRedisScript} re-checks a resource's modification time under
 * a lock on every {@code getSha1()}; on the acquire/release hot path we want neither, nor
 * encoding the text to bytes on every call.
 */
final class LuaScript {

    /**
     * Every script by its digest, to name the command a script's error reply refers to by
     * line.
     */
    private static final Map<String, LuaScript> BY_SHA1 = new ConcurrentHashMap<>();

    /**
     * A command a script runs: {@code redis.call('PEXPIRE', ...)} or
     * {@code redis.pcall(...)}.
     */
    private static final Pattern CALL = Pattern.compile("redis\\.p?call\\(\\s*'([A-Za-z|]+)'");

    private final String name;

    /**
     * Told when a node answers NOSCRIPT to this script, which is then never sent by its
     * source; {@code null} for scripts that any node may be sent (see
     * {@link #incarnation}).
     */
    private final Runnable whenNotCached;

    private final byte[] sourceBytes;

    private final String source;

    private final String sha1;

    private final byte[] sha1Bytes;

    private LuaScript(String name, String source) {
        this(name, source, null);
    }

    private LuaScript(String name, String source, Runnable whenNotCached) {
        this.name = name;
        this.whenNotCached = whenNotCached;
        this.source = source;
        this.sourceBytes = source.getBytes(StandardCharsets.UTF_8);
        this.sha1 = DigestUtils.sha1DigestAsHex(source);
        this.sha1Bytes = sha1.getBytes(StandardCharsets.US_ASCII);
        BY_SHA1.put(sha1, this);
    }

    /** The script with this digest, if it is one of ours. */
    static Optional<LuaScript> bySha1(String sha1) {
        return Optional.ofNullable(BY_SHA1.get(sha1.toLowerCase(Locale.ROOT)));
    }

    /**
     * The commands this script runs on one line of its text (1-based, as Redis counts in
     * {@code @user_script:<line>}), lower case as ACL rules spell them; empty for a line
     * without one.
     */
    List<String> commandsOnLine(int line) {
        String[] lines = source.split("\n", -1);
        if (line < 1 || line > lines.length) {
            return List.of();
        }
        List<String> commands = new ArrayList<>();
        Matcher matcher = CALL.matcher(lines[line - 1]);
        while (matcher.find()) {
            commands.add(matcher.group(1).toLowerCase(Locale.ROOT));
        }
        return commands;
    }

    /**
     * Loads {@code name} from this package (the scripts sit next to the backends), behind
     * the given preludes: files of shared {@code local function}s, since scripts cannot
     * call each other.
     */
    static LuaScript load(String name, String... preludes) {
        StringBuilder source = new StringBuilder();
        for (String prelude : preludes) {
            source.append(read(prelude));
        }
        source.append(read(name));
        return new LuaScript(name, source.toString());
    }

    /**
     * This script with {@code nonce} in a trailing comment: a script of its own, with its
     * own digest, that only a client knowing the nonce loads. Sent by digest alone, never
     * by its source, it runs only on a server that loaded it since it started; a node
     * that restarted, flushed its scripts, or is another server answering at the same
     * address, answers NOSCRIPT instead, in the very round trip that would have voted.
     * Redis does not keep scripts across a restart (7.0 and later: never; 6.2: only with
     * a replication backlog, see docs/redlock.md).
     * @param whenNotCached told on the client's I/O thread, before the call fails, when a
     * node answers NOSCRIPT
     */
    LuaScript incarnation(String nonce, Runnable whenNotCached) {
        // At the end, so that the line numbers error replies give stay those of the file.
        return new LuaScript(name + " (incarnation " + nonce + ")", source + "\n-- incarnation " + nonce + "\n",
                whenNotCached);
    }

    /** Whether this script may only run by its digest (an {@link #incarnation}). */
    boolean cachedOnly() {
        return whenNotCached != null;
    }

    /**
     * The failure of a call of an {@link #incarnation} that a node did not have cached,
     * after telling whoever watches the node.
     */
    LockBackendException notCached(LockKey key, String operation) {
        whenNotCached.run();
        return new LockBackendException(key.name(),
                "The node did not know this client's incarnation script for the " + operation + " of lock "
                        + key.printableName() + " (NOSCRIPT): it restarted, its scripts were "
                        + "flushed, or another server answers at its address now. Its vote does not count until it is "
                        + "checked again.",
                new NotCachedException());
    }

    /**
     * Why an {@link #incarnation} call failed: the node did not have the script cached.
     */
    static final class NotCachedException extends RuntimeException {

        NotCachedException() {
            super("NOSCRIPT for an incarnation script", null, false, false);
        }

    }

    private static String read(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("Lua script " + name + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Cannot read Lua script " + name, ex);
        }
    }

    /** The resource name. */
    @Override
    public String toString() {
        return name;
    }

    /** The script text, sent with {@code EVAL} when a node does not have it cached. */
    byte[] sourceBytes() {
        return sourceBytes;
    }

    /** The digest sent with {@code EVALSHA}, as hex. */
    String sha1() {
        return sha1;
    }

    /** The digest sent with {@code EVALSHA}, as hex. */
    byte[] sha1Bytes() {
        return sha1Bytes;
    }

    /**
     * This script for Spring Data's {@code execute(RedisScript, keys, args)}, which runs
     * it with {@code EVALSHA} and falls back to {@code EVAL}. The digest is computed
     * once, here, so the script is the same text and digest the Lettuce backend sends.
     * @param resultType {@code Long} for an integer reply, {@code List} for an array
     */
    <T> RedisScript<T> asRedisScript(Class<T> resultType) {
        return new RedisScript<>() {

            @Override
            public String getSha1() {
                return sha1;
            }

            @Override
            public Class<T> getResultType() {
                return resultType;
            }

            @Override
            public String getScriptAsString() {
                return source;
            }
        };
    }

}
