package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * A bad {@code @DistributedLock} fails the startup, with a message that names the class,
 * the method, the attribute, the bad value and the fix, even on methods that are never
 * called. Valid durations and placeholders reach the lease.
 */
class DistributedLockValidationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server());
    }

    @Test
    void keyThatIsNotValidSpelFailsTheStartup() {
        assertStartupFailure(BadSyntaxService.class, "BadSyntaxService", "place(", "key = \"'order:' + \"",
                "not a valid SpEL expression", "single quotes");
    }

    @Test
    void aLiteralKeyLongerThanTheMaximumFailsTheStartupNamingTheProperty() {
        runner().withPropertyValues("distributed-lock.max-key-length=10")
            .withBean(LongLiteralKeyService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "LongLiteralKeyService", "rebuild(",
                    "key = \"'search-index-rebuild'\"",
                    "is a literal of 20 characters, longer than " + "distributed-lock.max-key-length (10)",
                    "or raise distributed-lock.max-key-length"));
        runner().withPropertyValues("distributed-lock.max-key-length=20")
            .withBean(LongLiteralKeyService.class)
            .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void blankNameFailsTheStartupAndSaysWhatTheDefaultIs() {
        assertStartupFailure(BlankNameService.class, "BlankNameService", "export(", "name = \" \"", "must not be blank",
                "BlankNameService.export");
    }

    @Test
    void bareWordKeyFailsTheStartupAndSuggestsQuotesForALiteral() {
        assertStartupFailure(BareWordService.class, "BareWordService", "refund(", "key = \"orders\"",
                "key = \"'orders'\"");
    }

    @Test
    void bareWordThatNamesAParameterFailsTheStartupAndSuggestsTheHashPrefix() {
        assertStartupFailure(BareParameterService.class, "BareParameterService", "ship(", "key = \"orderId\"",
                "key = \"#orderId\"", "key = \"'orderId'\"");
    }

    @Test
    void referenceToAnUnknownParameterFailsTheStartupAndListsTheParameters() {
        assertStartupFailure(UnknownParameterService.class, "UnknownParameterService", "cancel(",
                "key = \"'order:' + #orderID\"", "#orderID", "not a parameter",
                "#orderId (or #p0, #a0), #quantity (or #p1, #a1)");
    }

    @Test
    void argumentIndexBeyondTheParametersFailsTheStartup() {
        assertStartupFailure(IndexOutOfRangeService.class, "IndexOutOfRangeService", "archive(", "key = \"#p1\"", "#p1",
                "#orderId (or #p0, #a0)");
    }

    @Test
    void referenceToAMissingBeanFailsTheStartup() {
        assertStartupFailure(MissingBeanService.class, "MissingBeanService", "audit(",
                "key = \"@tenantResolver.current()\"", "no bean named 'tenantResolver'");
    }

    @Test
    void unparsableTtlFailsTheStartup() {
        assertStartupFailure(UnparsableTtlService.class, "UnparsableTtlService", "export(", "ttl = \"30 seconds\"",
                "is not a duration", "ttl = \"30s\"");
    }

    @Test
    void zeroTtlFailsTheStartup() {
        assertStartupFailure(ZeroTtlService.class, "ZeroTtlService", "report(", "ttl = \"0s\"", "is not positive",
                "ttl = \"30s\"");
    }

    @Test
    void negativeTtlFailsTheStartup() {
        assertStartupFailure(NegativeTtlService.class, "NegativeTtlService", "report(", "ttl = \"-5s\"",
                "is not positive", "ttl = \"30s\"");
    }

    @Test
    void negativeWaitTimeFailsTheStartup() {
        assertStartupFailure(NegativeWaitService.class, "NegativeWaitService", "report(", "waitTime = \"-1s\"",
                "is negative", "waitTime = \"0s\"");
    }

    @Test
    void subMillisecondTtlFailsTheStartupNamingTheOneMillisecondMinimum() {
        assertStartupFailure(NanosecondTtlService.class, "NanosecondTtlService", "report(", "ttl = \"1ns\"",
                "shorter than 1ms", "whole milliseconds", "ttl = \"30s\"");
        assertStartupFailure(MicrosecondTtlService.class, "MicrosecondTtlService", "report(", "ttl = \"500us\"",
                "shorter than 1ms");
    }

    @Test
    void ttlLongerThanTheLeaseClockCanTimeFailsTheStartupNamingTheMaximum() {
        assertStartupFailure(CenturiesTtlService.class, "CenturiesTtlService", "report(", "ttl = \"300000d\"",
                "longer than 36500d", "nanoseconds", "ttl = \"30s\"");
    }

    @Test
    void waitTimeLongerThanTheDeadlineClockCanTimeFailsTheStartup() {
        assertStartupFailure(CenturiesWaitService.class, "CenturiesWaitService", "report(", "waitTime = \"300000d\"",
                "longer than 36500d", "waitTime = \"2s\"");
    }

    @Test
    void ttlsAtTheLimitsStartAndTheShortestIsAOneMillisecondLease() {
        runner().withBean(LimitTtlService.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockOperationSource source = context.getBean(LockOperationSource.class);
            assertThat(source.getLockOperation(LimitTtlService.class.getMethod("shortest"), LimitTtlService.class)
                .getTtl()).isEqualTo(Duration.ofMillis(1));
            assertThat(
                    source.getLockOperation(LimitTtlService.class.getMethod("longest"), LimitTtlService.class).getTtl())
                .isEqualTo(Duration.ofDays(36_500));
        });
    }

    @Test
    void bareNumberTtlFailsTheStartupAndSuggestsAUnit() {
        assertStartupFailure(BareNumberTtlService.class, "BareNumberTtlService", "report(", "ttl = \"5000\"",
                "a number without a unit", "ttl = \"5000ms\" or ttl = \"5s\"");
    }

    @Test
    void bareNumberWaitTimeFailsTheStartupAndSuggestsAUnit() {
        assertStartupFailure(BareNumberWaitService.class, "BareNumberWaitService", "report(", "waitTime = \"250\"",
                "a number without a unit", "waitTime = \"250ms\" or waitTime = \"250s\"");
    }

    @Test
    void placeholderThatResolvesToABareNumberFailsTheStartupAndSuggestsAUnit() {
        runner().withBean(PlaceholderService.class)
            .withPropertyValues("order.lock-ttl=5000")
            .run(context -> assertFailure(context.getStartupFailure(), "PlaceholderService", "export(",
                    "ttl = \"${order.lock-ttl}\"", "resolved to \"5000\"", "a number without a unit", "5000ms or 5s"));
    }

    @Test
    void unresolvablePlaceholderFailsTheStartupWithBootsStrictPlaceholderConfigurer() {
        runner().withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class))
            .withBean(PlaceholderService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "PlaceholderService", "export(",
                    "ttl = \"${order.lock-ttl}\"", "cannot be resolved", "ttl = \"${order.lock-ttl:30s}\""));
    }

    @Test
    void unresolvablePlaceholderFailsTheStartupWithTheContextsLenientFallbackResolver() {
        runner().withBean(PlaceholderService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "PlaceholderService", "export(",
                    "ttl = \"${order.lock-ttl}\"", "cannot be resolved", "ttl = \"${order.lock-ttl:30s}\""));
    }

    @Test
    void placeholderThatResolvesToAnInvalidDurationFailsTheStartup() {
        runner().withBean(PlaceholderService.class)
            .withPropertyValues("order.lock-ttl=soon")
            .run(context -> assertFailure(context.getStartupFailure(), "PlaceholderService", "export(",
                    "ttl = \"${order.lock-ttl}\"", "resolved to \"soon\"", "is not a duration"));
    }

    @Test
    void everyAnnotatedMethodOfAClassIsValidatedNotJustTheFirstMatch() {
        assertStartupFailure(OneBadMethodAmongManyService.class, "OneBadMethodAmongManyService", "e(", "key = \"oops\"",
                "key = \"'oops'\"");
    }

    @Test
    void invalidDeclarationOnAnInterfaceMethodFailsTheStartup() {
        assertStartupFailure(BadContractImpl.class, "BadContractImpl", "settle(", "key = \"invoices\"",
                "key = \"'invoices'\"");
    }

    @Test
    void resolvedPlaceholderTtlIsTheLeaseInRedis() {
        runner().withBean(PlaceholderService.class).withPropertyValues("order.lock-ttl=45s").run(context -> {
            assertThat(context).hasNotFailed();
            long pttl = context.getBean(PlaceholderService.class).export();
            // The default ttl is 30 s: anything above it can only come from the
            // placeholder.
            assertThat(pttl).isBetween(Duration.ofSeconds(40).toMillis(), Duration.ofSeconds(45).toMillis());
        });
    }

    @Test
    void isoDurationTtlIsTheLeaseInRedis() {
        runner().withBean(IsoTtlService.class).run(context -> {
            long pttl = context.getBean(IsoTtlService.class).export();
            assertThat(pttl).isBetween(Duration.ofSeconds(110).toMillis(), Duration.ofMinutes(2).toMillis());
        });
    }

    @Test
    void keyTogetherWithKeysFailsTheStartup() {
        assertStartupFailure(KeyAndKeysService.class, "KeyAndKeysService", "move(", "key = \"#from\"",
                "keys = {\"#from\", \"#to\"}", "not both");
    }

    @Test
    void entryOfKeysReferringToAnUnknownParameterFailsTheStartup() {
        assertStartupFailure(UnknownKeysParameterService.class, "UnknownKeysParameterService", "move(",
                "keys = \"'account:' + #too\"", "#too", "not a parameter", "#to (or #p1, #a1)");
    }

    @Test
    void blankEntryOfKeysFailsTheStartup() {
        assertStartupFailure(BlankKeysEntryService.class, "BlankKeysEntryService", "move(", "keys = \" \"", "is blank");
    }

    @Test
    void failureHandlerNamingNoBeanFailsTheStartupAndListsTheHandlers() {
        runner().withBean("cachedQuote", LockFailureHandler.class, () -> failure -> null)
            .withBean("staleQuote", LockFailureHandler.class, () -> failure -> null)
            .withBean(MissingHandlerService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "MissingHandlerService", "refresh(",
                    "failureHandler = \"cachedQuotes\"", "names no bean", "cachedQuote, staleQuote"));
    }

    @Test
    void failureHandlerNamingABeanOfAnotherTypeFailsTheStartup() {
        runner().withBean("cachedQuotes", String.class, () -> "not a handler")
            .withBean(MissingHandlerService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "MissingHandlerService", "refresh(",
                    "failureHandler = \"cachedQuotes\"", "not a LockFailureHandler", "java.lang.String",
                    "There is no LockFailureHandler bean"));
    }

    @Test
    void failureHandlerTogetherWithSkipFailsTheStartup() {
        runner().withBean("cachedQuote", LockFailureHandler.class, () -> failure -> null)
            .withBean(HandlerAndSkipService.class)
            .run(context -> assertFailure(context.getStartupFailure(), "HandlerAndSkipService", "refresh(",
                    "failureHandler = \"cachedQuote\"", "onFailure = SKIP"));
    }

    @Test
    void failureHandlerNamingAHandlerBeanStartsAndSeveralKeysParse() {
        runner().withBean("cachedQuote", LockFailureHandler.class, () -> failure -> null)
            .withBean(ValidHandlerAndKeysService.class)
            .run(context -> {
                assertThat(context).hasNotFailed();
                LockOperation operation = context.getBean(LockOperationSource.class)
                    .getLockOperation(ValidHandlerAndKeysService.class.getMethod("move", String.class, String.class),
                            ValidHandlerAndKeysService.class);
                assertThat(operation.getFailureHandler()).isEqualTo("cachedQuote");
                assertThat(operation.getKeys()).extracting(LockKeyExpression::getSource)
                    .containsExactly("'account:' + #from", "'account:' + #to");
            });
    }

    private void assertStartupFailure(Class<?> beanClass, String... fragments) {
        runner().withBean(beanClass).run(context -> assertFailure(context.getStartupFailure(), fragments));
    }

    private static void assertFailure(Throwable failure, String... fragments) {
        assertThat(failure).as("startup failure").isNotNull();
        assertThat(failure.getMessage()).contains(fragments);
        Throwable cause = failure;
        while (cause != null && !(cause instanceof InvalidLockDefinitionException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("InvalidLockDefinitionException in the cause chain of %s", failure).isNotNull();
    }

    static class KeyAndKeysService {

        @DistributedLock(key = "#from", keys = { "#from", "#to" })
        public void move(String from, String to) {
        }

    }

    static class UnknownKeysParameterService {

        @DistributedLock(keys = { "'account:' + #from", "'account:' + #too" })
        public void move(String from, String to) {
        }

    }

    static class LongLiteralKeyService {

        @DistributedLock(key = "'search-index-rebuild'")
        public void rebuild() {
        }

    }

    static class BlankKeysEntryService {

        @DistributedLock(keys = { "#from", " " })
        public void move(String from, String to) {
        }

    }

    static class MissingHandlerService {

        @DistributedLock(key = "#symbol", failureHandler = "cachedQuotes")
        public String refresh(String symbol) {
            return symbol;
        }

    }

    static class HandlerAndSkipService {

        @DistributedLock(key = "#symbol", failureHandler = "cachedQuote",
                onFailure = DistributedLock.FailureAction.SKIP)
        public String refresh(String symbol) {
            return symbol;
        }

    }

    static class ValidHandlerAndKeysService {

        @DistributedLock(keys = { "'account:' + #from", "'account:' + #to" }, failureHandler = "cachedQuote")
        public void move(String from, String to) {
        }

    }

    static class BadSyntaxService {

        @DistributedLock(key = "'order:' + ")
        public void place(String orderId) {
        }

    }

    static class BlankNameService {

        @DistributedLock(name = " ")
        public void export() {
        }

    }

    static class BareWordService {

        @DistributedLock(key = "orders")
        public void refund(String orderId) {
        }

    }

    static class BareParameterService {

        @DistributedLock(key = "orderId")
        public void ship(String orderId) {
        }

    }

    static class UnknownParameterService {

        @DistributedLock(key = "'order:' + #orderID")
        public void cancel(String orderId, int quantity) {
        }

    }

    static class IndexOutOfRangeService {

        @DistributedLock(key = "#p1")
        public void archive(String orderId) {
        }

    }

    static class MissingBeanService {

        @DistributedLock(key = "@tenantResolver.current()")
        public void audit() {
        }

    }

    static class UnparsableTtlService {

        @DistributedLock(ttl = "30 seconds")
        public void export() {
        }

    }

    static class ZeroTtlService {

        @DistributedLock(ttl = "0s")
        public void report() {
        }

    }

    static class NegativeTtlService {

        @DistributedLock(ttl = "-5s")
        public void report() {
        }

    }

    static class NegativeWaitService {

        @DistributedLock(waitTime = "-1s")
        public void report() {
        }

    }

    static class NanosecondTtlService {

        @DistributedLock(ttl = "1ns")
        public void report() {
        }

    }

    static class MicrosecondTtlService {

        @DistributedLock(ttl = "500us")
        public void report() {
        }

    }

    static class CenturiesTtlService {

        @DistributedLock(ttl = "300000d")
        public void report() {
        }

    }

    static class CenturiesWaitService {

        @DistributedLock(waitTime = "300000d")
        public void report() {
        }

    }

    static class LimitTtlService {

        @DistributedLock(ttl = "1ms")
        public void shortest() {
        }

        @DistributedLock(ttl = "36500d")
        public void longest() {
        }

    }

    static class BareNumberTtlService {

        @DistributedLock(ttl = "5000")
        public void report() {
        }

    }

    static class BareNumberWaitService {

        @DistributedLock(waitTime = "250")
        public void report() {
        }

    }

    static class PlaceholderService {

        private final LockProbe probe;

        PlaceholderService(LockProbe probe) {
            this.probe = probe;
        }

        @DistributedLock(key = "'export'", ttl = "${order.lock-ttl}", watchdog = DistributedLock.Watchdog.DISABLED)
        public long export() {
            return probe.pttl("lock:{export}");
        }

    }

    static class IsoTtlService {

        private final LockProbe probe;

        IsoTtlService(LockProbe probe) {
            this.probe = probe;
        }

        @DistributedLock(key = "'iso-export'", ttl = "PT2M", watchdog = DistributedLock.Watchdog.DISABLED)
        public long export() {
            return probe.pttl("lock:{iso-export}");
        }

    }

    static class OneBadMethodAmongManyService {

        @DistributedLock(key = "'a'")
        public void a() {
        }

        @DistributedLock(key = "'b'")
        public void b() {
        }

        @DistributedLock(key = "'c'")
        public void c() {
        }

        @DistributedLock(key = "'d'")
        public void d() {
        }

        @DistributedLock(key = "oops")
        public void e() {
        }

        @DistributedLock(key = "'f'")
        public void f() {
        }

    }

    interface BadContract {

        @DistributedLock(key = "invoices")
        void settle(String invoiceId);

    }

    static class BadContractImpl implements BadContract {

        @Override
        public void settle(String invoiceId) {
        }

    }

}
