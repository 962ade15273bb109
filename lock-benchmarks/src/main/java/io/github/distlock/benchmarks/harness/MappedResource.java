package io.github.distlock.benchmarks.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The counter and last owner in a small memory-mapped file, so that several JVMs touch
 * the same bytes. Plain reads and writes (no atomics, no file locks): as with the in-JVM
 * fields, only the distributed lock keeps processes from interleaving, and lost updates
 * show as violations.
 */
public final class MappedResource implements SharedResource, AutoCloseable {

    private static final int COUNTER = 0;

    private static final int LAST_OWNER = 8;

    private final FileChannel channel;

    private final MappedByteBuffer buffer;

    /**
     * Maps {@code file}, creating it if needed.
     * @param file the shared file
     */
    public MappedResource(Path file) {
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            buffer = channel.map(FileChannel.MapMode.READ_WRITE, 0, 16);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot map " + file, ex);
        }
    }

    /** Sets the counter to 0 and the last owner to none; only while no process runs. */
    public void reset() {
        buffer.putLong(COUNTER, 0);
        buffer.putLong(LAST_OWNER, -1);
        buffer.force();
    }

    @Override
    public long counter() {
        return buffer.getLong(COUNTER);
    }

    @Override
    public void counter(long value) {
        buffer.putLong(COUNTER, value);
    }

    @Override
    public long lastOwner() {
        return buffer.getLong(LAST_OWNER);
    }

    @Override
    public void lastOwner(long owner) {
        buffer.putLong(LAST_OWNER, owner);
    }

    @Override
    public void close() {
        try {
            channel.close();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

}
