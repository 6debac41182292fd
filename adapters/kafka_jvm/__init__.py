"""kafka-jvm: Kafka's own controller classes (ReplicationControlManager and its neighbours) in one
long-lived JVM, driven over the `exec:` JSON-lines protocol (docs/kafka-jvm.md)."""
