package io.github.distlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.data.redis.core.script.DigestUtils;

/**
 * A Lua script loaded once from the classpath, with its SHA-1 for {@code EVALSHA}.
 *
 * <p>Spring Data's {@code DefaultRedisScript} re-checks a resource's modification time under a
 * lock on every {@code getSha1()}; on the acquire/release hot path we want neither, nor encoding
 * the text to bytes on every call.
 */
final class LuaScript {

    private final String name;
    private final byte[] sourceBytes;
    private final byte[] sha1Bytes;

    private LuaScript(String name, String source) {
        this.name = name;
        this.sourceBytes = source.getBytes(StandardCharsets.UTF_8);
        this.sha1Bytes = DigestUtils.sha1DigestAsHex(source).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Loads {@code name} from next to {@link RedisLockBackend}, behind the given preludes: files of
     * shared {@code local function}s, since scripts cannot call each other.
     */
    static LuaScript load(String name, String... preludes) {
        StringBuilder source = new StringBuilder();
        for (String prelude : preludes) {
            source.append(read(prelude));
        }
        source.append(read(name));
        return new LuaScript(name, source.toString());
    }

    private static String read(String name) {
        try (InputStream in = RedisLockBackend.class.getResourceAsStream(name)) {
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
    byte[] sha1Bytes() {
        return sha1Bytes;
    }
}
