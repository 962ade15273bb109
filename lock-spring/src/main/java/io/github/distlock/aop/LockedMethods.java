package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

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
                addLockedMethods(ClassUtils.getUserClass(type), methods);
            }
        }
        return List.copyOf(methods);
    }

    private static void addLockedMethods(Class<?> type, Set<String> methods) {
        if (!AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
            return;
        }
        Set<Class<?>> types = new LinkedHashSet<>();
        types.add(type);
        types.addAll(ClassUtils.getAllInterfacesForClassAsSet(type));
        for (Class<?> declaring : types) {
            for (Method method : ReflectionUtils.getAllDeclaredMethods(declaring)) {
                if (!method.isBridge() && method.getDeclaringClass() != Object.class
                        && AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)) {
                    methods.add(InvalidLockDefinitionException.describe(ClassUtils.getMostSpecificMethod(method, type),
                            type));
                }
            }
        }
    }

}
