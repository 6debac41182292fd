package org.apache.kafka.controller;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Every difference between Kafka 3.3, 3.5, 3.7 and 3.9 that the harness meets, in one place.
 *
 * <p>The harness source compiles against each release's jars; what differs between releases
 * (constructors, builder setters, method signatures, class names) is reached here by reflection,
 * choosing the form the release has. Each method names the releases and the Kafka members involved.
 */
final class IsrcheckCompat {
    private IsrcheckCompat() {
    }

    /** The ApiException behind a reflective call, so callers see Kafka's own exception. */
    static RuntimeException unwrap(Throwable error) {
        Throwable cause = error;
        while (cause instanceof InvocationTargetException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RuntimeException) {
            return (RuntimeException) cause;
        }
        return new RuntimeException(cause);
    }

    static Method method(Class<?> type, String name, int parameters) {
        for (Method m : type.getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == parameters && !m.isSynthetic()) {
                m.setAccessible(true);
                return m;
            }
        }
        return null;
    }

    static Object call(Object target, Method m, Object... args) {
        try {
            return m.invoke(target, args);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw unwrap(e);
        }
    }

    /** Calls a one-argument builder setter if this release has it (e.g. 3.7+ setEligibleLeaderReplicasEnabled). */
    static void setIfPresent(Object builder, String name, Object value) {
        Method m = method(builder.getClass(), name, 1);
        if (m != null) {
            call(builder, m, value);
        }
    }

    /** {@code QuorumFeatures}: (nodeId, ApiVersions, features, voters) in 3.3/3.5; (nodeId, features, voters) from 3.7. */
    static QuorumFeatures quorumFeatures() {
        Map<String, VersionRange> local = defaultFeatureMap();
        List<Integer> voters = Collections.singletonList(0);
        try {
            for (Constructor<?> c : QuorumFeatures.class.getDeclaredConstructors()) {
                c.setAccessible(true);
                if (c.getParameterCount() == 3) {
                    return (QuorumFeatures) c.newInstance(0, local, voters);
                }
            }
            for (Constructor<?> c : QuorumFeatures.class.getDeclaredConstructors()) {
                if (c.getParameterCount() == 4) {
                    return (QuorumFeatures) c.newInstance(0, new ApiVersions(), local, voters);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
        throw new IllegalStateException("no known QuorumFeatures constructor");
    }

    /** {@code QuorumFeatures.defaultFeatureMap()} (3.3/3.5) or {@code defaultFeatureMap(false)} (3.7+: no unstable levels). */
    @SuppressWarnings("unchecked")
    static Map<String, VersionRange> defaultFeatureMap() {
        Method withFlag = method(QuorumFeatures.class, "defaultFeatureMap", 1);
        if (withFlag != null) {
            return (Map<String, VersionRange>) call(null, withFlag, false);
        }
        return (Map<String, VersionRange>) call(null, method(QuorumFeatures.class, "defaultFeatureMap", 0));
    }

    /** The newest production metadata.version: {@code latestProduction()} (3.7+) or {@code latest()} (3.3/3.5). */
    static MetadataVersion latestProductionMetadataVersion() {
        Method m = method(MetadataVersion.class, "latestProduction", 0);
        if (m == null) {
            m = method(MetadataVersion.class, "latest", 0);
        }
        return (MetadataVersion) call(null, m);
    }

    /**
     * {@code FeatureControlManager}, built as {@code ReplicationControlManagerTest} does; 3.7+ also
     * takes a {@code ClusterFeatureSupportDescriber} (only used by UpdateFeatures), given an empty one.
     */
    static FeatureControlManager featureControl(LogContext logContext, org.apache.kafka.timeline.SnapshotRegistry registry,
                                                MetadataVersion metadataVersion) {
        FeatureControlManager.Builder builder = new FeatureControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setQuorumFeatures(quorumFeatures())
            .setMetadataVersion(metadataVersion);
        Method describer = method(FeatureControlManager.Builder.class, "setClusterFeatureSupportDescriber", 1);
        if (describer != null) {
            Class<?> type = describer.getParameterTypes()[0];
            Object empty = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, m, args) -> m.getReturnType() == java.util.Iterator.class ? Collections.emptyIterator() : null);
            call(builder, describer, empty);
        }
        return builder.build();
    }

    /**
     * {@code ClusterControlManager}; 3.9 needs a {@code BrokerUncleanShutdownHandler}, which
     * {@code QuorumController} wires to {@code ReplicationControlManager.handleBrokerUncleanShutdown}
     * (a no-op unless the metadata.version supports ELR) — wired the same way here.
     */
    static ClusterControlManager clusterControl(LogContext logContext, String clusterId, IsrcheckManualTime time,
                                                org.apache.kafka.timeline.SnapshotRegistry registry, long sessionTimeoutNs,
                                                FeatureControlManager featureControl,
                                                AtomicReference<ReplicationControlManager> replication) {
        ClusterControlManager.Builder builder = new ClusterControlManager.Builder()
            .setLogContext(logContext)
            .setClusterId(clusterId)
            .setTime(time)
            .setSnapshotRegistry(registry)
            .setSessionTimeoutNs(sessionTimeoutNs)
            .setReplicaPlacer(new org.apache.kafka.metadata.placement.StripedReplicaPlacer(new java.util.Random(0)))
            .setFeatureControlManager(featureControl);
        Method handlerSetter = method(ClusterControlManager.Builder.class, "setBrokerUncleanShutdownHandler", 1);
        if (handlerSetter != null) {
            Class<?> type = handlerSetter.getParameterTypes()[0];
            Method target = method(ReplicationControlManager.class, "handleBrokerUncleanShutdown", 2);
            Object handler = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                if (m.getDeclaringClass() == Object.class) {
                    return m.getName().equals("hashCode") ? 0 : m.getName().equals("equals") ? proxy == args[0] : "handler";
                }
                return call(replication.get(), target, args[0], args[1]);
            });
            call(builder, handlerSetter, handler);
        }
        return builder.build();
    }

    /** {@code ReplicationControlManager.Builder} setters that exist only from 3.7 are set to their defaults. */
    static ReplicationControlManager replicationControl(LogContext logContext, org.apache.kafka.timeline.SnapshotRegistry registry,
                                                        ConfigurationControlManager configurationControl,
                                                        ClusterControlManager clusterControl,
                                                        FeatureControlManager featureControl, int minIsr) {
        ReplicationControlManager.Builder builder = new ReplicationControlManager.Builder()
            .setSnapshotRegistry(registry)
            .setLogContext(logContext)
            .setConfigurationControl(configurationControl)
            .setClusterControl(clusterControl)
            .setFeatureControl(featureControl);
        setIfPresent(builder, "setEligibleLeaderReplicasEnabled", false);
        setIfPresent(builder, "setDefaultMinIsr", minIsr);
        return builder.build();
    }

    /**
     * A config schema with the two settings the scenarios use, as topic configs whose broker-level
     * synonyms have the same names (as in {@code LogConfig}); {@code ConfigSynonym} moved from
     * {@code org.apache.kafka.metadata} (3.3-3.7) to {@code org.apache.kafka.server.config} (3.9).
     */
    static KafkaConfigSchema configSchema() {
        ConfigDef topic = new ConfigDef()
            .define("unclean.leader.election.enable", ConfigDef.Type.BOOLEAN, "false", ConfigDef.Importance.HIGH, "")
            .define("min.insync.replicas", ConfigDef.Type.INT, "1", ConfigDef.Importance.HIGH, "");
        ConfigDef broker = new ConfigDef()
            .define("unclean.leader.election.enable", ConfigDef.Type.BOOLEAN, "false", ConfigDef.Importance.HIGH, "")
            .define("min.insync.replicas", ConfigDef.Type.INT, "1", ConfigDef.Importance.HIGH, "");
        Map<ConfigResource.Type, ConfigDef> defs = new HashMap<>();
        defs.put(ConfigResource.Type.TOPIC, topic);
        defs.put(ConfigResource.Type.BROKER, broker);
        Map<String, List<Object>> synonyms = new HashMap<>();
        for (String name : new String[] {"unclean.leader.election.enable", "min.insync.replicas"}) {
            synonyms.put(name, Collections.singletonList(configSynonym(name)));
        }
        try {
            Constructor<?> c = KafkaConfigSchema.class.getConstructor(Map.class, Map.class);
            return (KafkaConfigSchema) c.newInstance(defs, synonyms);
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
    }

    private static Object configSynonym(String name) {
        for (String className : new String[] {"org.apache.kafka.server.config.ConfigSynonym", "org.apache.kafka.metadata.ConfigSynonym"}) {
            try {
                return Class.forName(className).getConstructor(String.class).newInstance(name);
            } catch (ClassNotFoundException e) {
                continue;
            } catch (ReflectiveOperationException e) {
                throw unwrap(e);
            }
        }
        throw new IllegalStateException("no ConfigSynonym class");
    }

    /** {@code registerBroker(request, epoch, features)} (3.3/3.5/3.9) or {@code (…, short requestVersion)} (3.7). */
    @SuppressWarnings("unchecked")
    static ControllerResult<BrokerRegistrationReply> registerBroker(ClusterControlManager cluster, BrokerRegistrationRequestData request,
                                                                   long brokerEpoch, FinalizedControllerFeatures features, short version) {
        Method four = method(ClusterControlManager.class, "registerBroker", 4);
        if (four != null) {
            return (ControllerResult<BrokerRegistrationReply>) call(cluster, four, request, brokerEpoch, features, version);
        }
        return (ControllerResult<BrokerRegistrationReply>) call(cluster, method(ClusterControlManager.class, "registerBroker", 3),
            request, brokerEpoch, features);
    }

    /** {@code createTopics(request, describable)} (3.3) or {@code createTopics(context, request, describable)} (3.5+). */
    @SuppressWarnings("unchecked")
    static ControllerResult<org.apache.kafka.common.message.CreateTopicsResponseData> createTopics(
            ReplicationControlManager rcm, ControllerRequestContext context, CreateTopicsRequestData request,
            java.util.Set<String> describable) {
        Method three = method(ReplicationControlManager.class, "createTopics", 3);
        if (three != null) {
            return (ControllerResult<org.apache.kafka.common.message.CreateTopicsResponseData>) call(rcm, three, context, request,
                describable);
        }
        return (ControllerResult<org.apache.kafka.common.message.CreateTopicsResponseData>) call(rcm,
            method(ReplicationControlManager.class, "createTopics", 2), request, describable);
    }

    /** {@code createPartitions(topics)} (3.3) or {@code createPartitions(context, topics)} (3.5+): the overload returning a result. */
    @SuppressWarnings("unchecked")
    static ControllerResult<List<org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult>>
            createPartitions(ReplicationControlManager rcm, ControllerRequestContext context,
                             List<CreatePartitionsRequestData.CreatePartitionsTopic> topics) {
        for (Method m : ReplicationControlManager.class.getDeclaredMethods()) {
            if (!m.getName().equals("createPartitions") || m.getReturnType() != ControllerResult.class) {
                continue;
            }
            m.setAccessible(true);
            Object result = m.getParameterCount() == 2 ? call(rcm, m, context, topics) : call(rcm, m, topics);
            return (ControllerResult<List<org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult>>) result;
        }
        throw new IllegalStateException("no createPartitions");
    }

    /** ELR fields of a {@code PartitionRegistration} (3.7+), empty before. */
    static int[] intArrayField(PartitionRegistration partition, String name) {
        try {
            Field f = PartitionRegistration.class.getField(name);
            return (int[]) f.get(partition);
        } catch (NoSuchFieldException e) {
            return new int[0];
        } catch (IllegalAccessException e) {
            throw unwrap(e);
        }
    }

    /** Whether a request schema has a (non-tagged) field at this version, e.g. LogDirs of BrokerRegistration v2+. */
    static boolean hasField(Schema[] schemas, short version, String name) {
        return version < schemas.length && schemas[version] != null && schemas[version].get(name) != null;
    }
}
