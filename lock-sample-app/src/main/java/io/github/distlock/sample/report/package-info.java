/**
 * A scheduled job that runs on one instance per period.
 */
package io.github.distlock.sample.report;
