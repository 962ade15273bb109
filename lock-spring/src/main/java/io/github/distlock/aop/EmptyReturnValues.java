package io.github.distlock.aop;

import java.lang.reflect.Array;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.stream.DoubleStream;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.springframework.core.CollectionFactory;

/**
 * What a call skipped by {@code onBusy}, {@code onUnavailable} or
 * {@code onFailure = SKIP} returns, chosen once per method from its declared return type:
 * {@code null}, zero or {@code false} for a primitive, an empty {@code Optional},
 * collection, map, array or stream, or a future completed with {@code null}. (An empty
 * reactive result comes from its {@link org.springframework.core.ReactiveAdapter}; see
 * {@link LockOperation}.)
 */
final class EmptyReturnValues {

    private EmptyReturnValues() {
    }

    /**
     * A supplier of the empty value for {@code type}. Immutable values are shared;
     * streams and futures are made per call, because a stream can be consumed only once
     * and a future can be completed by its receiver.
     */
    static Supplier<@Nullable Object> of(Class<?> type) {
        if (type.isPrimitive()) {
            Object zero = zeroOf(type);
            return () -> zero;
        }
        Object constant = constantOf(type);
        if (constant != null) {
            return () -> constant;
        }
        if (type == Stream.class) {
            return Stream::empty;
        }
        if (type == IntStream.class) {
            return IntStream::empty;
        }
        if (type == LongStream.class) {
            return LongStream::empty;
        }
        if (type == DoubleStream.class) {
            return DoubleStream::empty;
        }
        if (CompletionStage.class.isAssignableFrom(type) && type.isAssignableFrom(CompletableFuture.class)) {
            return () -> CompletableFuture.completedFuture(null);
        }
        if ((Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type)) && canInstantiate(type)) {
            // A concrete class such as ArrayList: a fresh, mutable instance, as the
            // caller may add to it.
            return Map.class.isAssignableFrom(type) ? () -> CollectionFactory.createMap(type, 0)
                    : () -> CollectionFactory.createCollection(type, 0);
        }
        return () -> null;
    }

    private static @Nullable Object zeroOf(Class<?> primitive) {
        if (primitive == boolean.class) {
            return Boolean.FALSE;
        }
        if (primitive == char.class) {
            return '\0';
        }
        if (primitive == byte.class) {
            return (byte) 0;
        }
        if (primitive == short.class) {
            return (short) 0;
        }
        if (primitive == int.class) {
            return 0;
        }
        if (primitive == long.class) {
            return 0L;
        }
        if (primitive == float.class) {
            return 0f;
        }
        if (primitive == double.class) {
            return 0d;
        }
        return null; // void
    }

    private static @Nullable Object constantOf(Class<?> type) {
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == OptionalInt.class) {
            return OptionalInt.empty();
        }
        if (type == OptionalLong.class) {
            return OptionalLong.empty();
        }
        if (type == OptionalDouble.class) {
            return OptionalDouble.empty();
        }
        if (type == List.class || type == Collection.class || type == Iterable.class) {
            return Collections.emptyList();
        }
        if (type == Set.class) {
            return Collections.emptySet();
        }
        if (type == SortedSet.class || type == NavigableSet.class) {
            return Collections.emptyNavigableSet();
        }
        if (type == Map.class) {
            return Collections.emptyMap();
        }
        if (type == SortedMap.class || type == NavigableMap.class) {
            return Collections.emptyNavigableMap();
        }
        if (type.isArray()) {
            return Array.newInstance(type.getComponentType(), 0);
        }
        return null;
    }

    private static boolean canInstantiate(Class<?> type) {
        if (Modifier.isAbstract(type.getModifiers())) {
            return false;
        }
        try {
            return type.getConstructor() != null;
        }
        catch (NoSuchMethodException ex) {
            return false;
        }
    }

}
