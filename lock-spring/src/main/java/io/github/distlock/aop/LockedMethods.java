package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.distlock.DistributedLock;

/**
 * Finds the {@link DistributedLock @DistributedLock} methods of a context's beans, from
 * their types alone (no bean is created), so that the startup can refuse, or warn about,
 * methods that would run without a lock. Looks where the operation source does: the
 * bean's class, its superclasses and its interfaces.
 */
public final class LockedMethods {

    private LockedMethods() {
    }

    /**
     * The locked methods of every bean the factory defines, each once, in bean definition
     * order.
     * @param beanFactory the context's bean factory
     * @return readable names such as
     * {@code com.example.OrderService.place(String orderId)}
     */
    public static List<String> of(ConfigurableListableBeanFactory beanFactory) {
        return matching(beanFactory, annotation -> true);
    }

    /**
     * The locked methods that ask for a minimum hold ({@link DistributedLock#minHold()}),
     * which only a lock service that
     * {@link io.github.distlock.LockService#supportsMinHold() supports it} can keep.
     * @param beanFactory the context's bean factory
     * @return readable names, as {@link #of} gives them
     */
    public static List<String> withMinHold(ConfigurableListableBeanFactory beanFactory) {
        return matching(beanFactory, annotation -> !annotation.minHold().isEmpty());
    }

    /**
     * Every locked method with its annotation, for checks that need its attributes (its
     * backend, its minimum hold) once the lock service exists.
     * @param beanFactory the context's bean factory
     * @return the annotations by readable method name, in bean definition order
     */
    public static Map<String, DistributedLock> annotations(ConfigurableListableBeanFactory beanFactory) {
        Map<String, DistributedLock> annotations = new LinkedHashMap<>();
        matching(beanFactory, annotation -> true, annotations);
        return annotations;
    }

    private static List<String> matching(ConfigurableListableBeanFactory beanFactory,
            Predicate<DistributedLock> wanted) {
        return matching(beanFactory, wanted, new LinkedHashMap<>());
    }

    private static List<String> matching(ConfigurableListableBeanFactory beanFactory, Predicate<DistributedLock> wanted,
            Map<String, DistributedLock> found) {
        Set<Class<?>> seen = new LinkedHashSet<>();
        Set<String> methods = new LinkedHashSet<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type;
            try {
                type = beanFactory.getType(name, false);
            }
            catch (RuntimeException | LinkageError ex) {
                continue; // a type that cannot be resolved holds no method anybody calls
            }
            if (type != null && seen.add(ClassUtils.getUserClass(type))) {
                addLockedMethods(ClassUtils.getUserClass(type), methods, wanted, found);
            }
            // A factory method may declare an interface: once the bean exists, its own
            // class (behind any proxy) tells where the annotations are.
            Object singleton = (beanFactory.containsSingleton(name) ? beanFactory.getSingleton(name) : null);
            if (singleton != null) {
                Class<?> target = AopProxyUtils.ultimateTargetClass(singleton);
                if (seen.add(ClassUtils.getUserClass(target))) {
                    addLockedMethods(ClassUtils.getUserClass(target), methods, wanted, found);
                }
            }
        }
        return List.copyOf(methods);
    }

    private static void addLockedMethods(Class<?> type, Set<String> methods, Predicate<DistributedLock> wanted,
            Map<String, DistributedLock> found) {
        if (!AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
            return;
        }
        Set<Class<?>> types = new LinkedHashSet<>();
        types.add(type);
        types.addAll(ClassUtils.getAllInterfacesForClassAsSet(type));
        for (Class<?> declaring : types) {
            for (Method method : ReflectionUtils.getAllDeclaredMethods(declaring)) {
                DistributedLock annotation = (method.isBridge() || method.getDeclaringClass() == Object.class ? null
                        : AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class));
                if (annotation != null && wanted.test(annotation)) {
                    String described = InvalidLockDefinitionException
                        .describe(ClassUtils.getMostSpecificMethod(method, type), type);
                    methods.add(described);
                    found.putIfAbsent(described, annotation);
                }
            }
        }
    }

}
