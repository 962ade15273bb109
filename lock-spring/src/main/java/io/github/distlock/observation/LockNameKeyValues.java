package io.github.distlock.observation;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * The tag sets of one lock name, built once: the default conventions run on every
 * acquisition and release, and lock names are few, so each call then only looks its tags
 * up instead of allocating and sorting them again.
 */
final class LockNameKeyValues {

    private final KeyValues nameOnly;

    private final String contextualName;

    /**
     * Indexed by outcome ordinal, then by waited (0/1) where it applies; filled lazily,
     * races are harmless.
     */
    private final @Nullable KeyValues[] ended;

    private LockNameKeyValues(String lockName, String backend, String phase, int endings) {
        this.nameOnly = KeyValues.of(LockObservationDocumentation.LowCardinalityKeyNames.LOCK_NAME.withValue(lockName),
                LockObservationDocumentation.LowCardinalityKeyNames.BACKEND.withValue(backend));
        this.contextualName = phase + " " + lockName;
        this.ended = new KeyValues[endings];
    }

    /**
     * A cache of these per backend and lock name, for one phase ("lock acquire" or "lock
     * hold"); two look-ups and no allocation once a name was seen.
     */
    static BiFunction<String, String, LockNameKeyValues> cache(String phase, int endings) {
        ConcurrentMap<String, ConcurrentMap<String, LockNameKeyValues>> byBackend = new ConcurrentHashMap<>();
        return (name, backend) -> {
            ConcurrentMap<String, LockNameKeyValues> byName = byBackend.get(backend);
            if (byName == null) {
                byName = byBackend.computeIfAbsent(backend, key -> new ConcurrentHashMap<>());
            }
            LockNameKeyValues found = byName.get(name);
            return found != null ? found
                    : byName.computeIfAbsent(name, key -> new LockNameKeyValues(key, backend, phase, endings));
        };
    }

    KeyValues nameOnly() {
        return nameOnly;
    }

    String contextualName() {
        return contextualName;
    }

    /**
     * The tags of an ended phase: the name and {@code extra}, cached under {@code index}.
     */
    KeyValues ended(int index, KeyValue... extra) {
        KeyValues found = ended[index];
        if (found == null) {
            found = nameOnly.and(extra);
            ended[index] = found;
        }
        return found;
    }

}
