package io.github.distlock.sample.report;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The scheduled report, on when {@code sample.scheduled-report.enabled=true} (the
 * {@code scheduled} demo sets it); its timing is in application.properties.
 */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
@ConditionalOnBooleanProperty("sample.scheduled-report.enabled")
public class ScheduledReportConfiguration {

    @Bean
    ScheduledReport scheduledReport(StringRedisTemplate redis, @Value("${spring.application.name}") String instance,
            @Value("${sample.scheduled-report.period}") Duration period) {
        return new ScheduledReport(redis, instance, period.toMillis());
    }

    @Bean
    ReportSchedule reportSchedule(ScheduledReport report,
            @Value("${sample.scheduled-report.clock-behind:0ms}") Duration clockBehind) {
        return new ReportSchedule(report, clockBehind);
    }

}
