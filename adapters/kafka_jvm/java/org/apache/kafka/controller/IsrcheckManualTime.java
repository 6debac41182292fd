package org.apache.kafka.controller;

import java.util.function.Supplier;

import org.apache.kafka.common.utils.Time;

/**
 * The mock clock of the isrcheck harness: time moves only when the harness sleeps, as with
 * Kafka's own {@code MockTime} in {@code ReplicationControlManagerTest} (controller.md §4.3:
 * session expiry is judged against {@code Time.nanoseconds()} by {@code BrokerHeartbeatManager}).
 */
final class IsrcheckManualTime implements Time {
    private long nowMs = 1_700_000_000_000L;

    @Override
    public long milliseconds() {
        return nowMs;
    }

    @Override
    public long nanoseconds() {
        return nowMs * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
        nowMs += ms;
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException("the isrcheck harness never waits");
    }
}
