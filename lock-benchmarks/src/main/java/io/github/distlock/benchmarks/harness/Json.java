package io.github.distlock.benchmarks.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * The one JSON mapper of the module: results between forks, harness.json, and JMH's
 * output.
 */
public final class Json {

    /** Lenient on read, so that a report can read results written by an older harness. */
    public static final ObjectMapper MAPPER = new ObjectMapper().registerModule(new JavaTimeModule())
        .configure(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS, false)
        .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
        .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);

    private Json() {
    }

    /**
     * @param value a record or collection of records
     * @return one line of JSON
     */
    public static String line(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @param text JSON
     * @param type the target type
     * @param <T> the target type
     * @return the value
     */
    public static <T> T read(String text, Class<T> type) {
        try {
            return MAPPER.readValue(text, type);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + type.getSimpleName() + " from " + text, ex);
        }
    }

    /**
     * Writes pretty-printed JSON, creating parent directories.
     * @param file the file
     * @param value the value
     */
    public static void write(Path file, Object value) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            MAPPER.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), value);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot write " + file, ex);
        }
    }

}
