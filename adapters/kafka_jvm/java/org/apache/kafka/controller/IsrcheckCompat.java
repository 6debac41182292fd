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
 * Every difference between Kafka 3.3, 3.5, 3.7, 3.9, 4.0 and 4.1 that the harness meets, in one place.
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

    /**
     * {@code QuorumFeatures.defaultFeatureMap()} (3.3/3.5), {@code defaultFeatureMap(false)} (3.7-3.9: no
     * unstable levels) or {@code defaultSupportedFeatureMap(false)} (4.x).
     */
    @SuppressWarnings("unchecked")
    static Map<String, VersionRange> defaultFeatureMap() {
        Method withFlag = method(QuorumFeatures.class, "defaultFeatureMap", 1);
        if (withFlag == null) {
            withFlag = method(QuorumFeatures.class, "defaultSupportedFeatureMap", 1);
        }
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

    /** KRaft's lowest metadata.version: {@code MINIMUM_KRAFT_VERSION} (3.x) or {@code MINIMUM_VERSION} (4.x, where every version is KRaft's). */
    static MetadataVersion minimumKraftMetadataVersion() {
        for (String name : new String[] {"MINIMUM_KRAFT_VERSION", "MINIMUM_VERSION"}) {
            try {
                return (MetadataVersion) MetadataVersion.class.getField(name).get(null);
            } catch (NoSuchFieldException e) {
                continue;
            } catch (IllegalAccessException e) {
                throw unwrap(e);
            }
        }
        throw new IllegalStateException("no minimum metadata.version constant");
    }

    /**
     * {@code FeatureControlManager}, built as {@code ReplicationControlManagerTest} does; 3.7+ also
     * takes a {@code ClusterFeatureSupportDescriber} (only used by UpdateFeatures), given an empty one.
     * 3.3-4.0's builder takes the metadata.version ({@code setMetadataVersion}); 4.1's has no such setter
     * (FeatureControlManager.Builder at 4.1.1): the version is known only once the bootstrap
     * {@code FeatureLevelRecord} the harness appends at open is replayed, as on a real controller.
     */
    static FeatureControlManager featureControl(LogContext logContext, org.apache.kafka.timeline.SnapshotRegistry registry,
                                                MetadataVersion metadataVersion) {
        FeatureControlManager.Builder builder = new FeatureControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setQuorumFeatures(quorumFeatures());
        setIfPresent(builder, "setMetadataVersion", metadataVersion);
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
     * (a no-op unless the metadata.version supports ELR); 4.0 and 4.1 need a {@code BrokerShutdownHandler}
     * ({@code addRecordsForShutdown(brokerId, isCleanShutdown, records)}, required by
     * {@code ClusterControlManager.Builder.build}), which {@code QuorumController.handleBrokerShutdown}
     * hands to {@code ReplicationControlManager.handleBrokerShutdown} — each wired the same way here.
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
        Method target = method(ReplicationControlManager.class, "handleBrokerUncleanShutdown", 2);
        if (handlerSetter == null) {
            handlerSetter = method(ClusterControlManager.Builder.class, "setBrokerShutdownHandler", 1);
            target = method(ReplicationControlManager.class, "handleBrokerShutdown", 3);
        }
        if (handlerSetter != null) {
            Class<?> type = handlerSetter.getParameterTypes()[0];
            Method handle = target;
            Object handler = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                if (m.getDeclaringClass() == Object.class) {
                    return m.getName().equals("hashCode") ? 0 : m.getName().equals("equals") ? proxy == args[0] : "handler";
                }
                return call(replication.get(), handle, args);
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

    /**
     * {@code registerBroker(request, epoch, features)} (3.3/3.5/3.9), {@code (…, short requestVersion)} (3.7),
     * or {@code (…, boolean cleanShutdownDetectionEnabled)} (4.x), which {@code QuorumController.registerBroker}
     * at 4.0.1 / 4.1.1 passes as {@code requestApiVersion() >= 3}: only a v3+ registration's
     * {@code previousBrokerEpoch} can say the last shutdown was clean.
     */
    @SuppressWarnings("unchecked")
    static ControllerResult<BrokerRegistrationReply> registerBroker(ClusterControlManager cluster, BrokerRegistrationRequestData request,
                                                                   long brokerEpoch, FinalizedControllerFeatures features, short version) {
        Method four = method(ClusterControlManager.class, "registerBroker", 4);
        if (four != null) {
            Object last = four.getParameterTypes()[3] == boolean.class ? (Object) (version >= 3) : (Object) version;
            return (ControllerResult<BrokerRegistrationReply>) call(cluster, four, request, brokerEpoch, features, last);
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

    /** A tracked broker's reported metadata offset: a package-private field on 3.x, private behind {@code metadataOffset()} on 4.x. */
    static long metadataOffset(BrokerHeartbeatManager.BrokerHeartbeatState state) {
        Method getter = method(BrokerHeartbeatManager.BrokerHeartbeatState.class, "metadataOffset", 0);
        if (getter != null) {
            return (Long) call(state, getter);
        }
        try {
            Field f = BrokerHeartbeatManager.BrokerHeartbeatState.class.getDeclaredField("metadataOffset");
            f.setAccessible(true);
            return f.getLong(state);
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
    }

    /**
     * 4.x's per-(broker, epoch) contact time ({@code BrokerHeartbeatTracker}, KAFKA-17793):
     * {@code ClusterControlManager.trackBrokerHeartbeat(id, epoch)}, which
     * {@code QuorumController.processBrokerHeartbeat} calls for every heartbeat before its write
     * event, fenced brokers and unknown epochs included. 3.x has no such method (its session is
     * per broker, kept by {@code BrokerHeartbeatManager.touch}): false.
     */
    static boolean trackBrokerHeartbeat(ClusterControlManager cluster, int brokerId, long brokerEpoch) {
        Method track = method(ClusterControlManager.class, "trackBrokerHeartbeat", 2);
        if (track == null) {
            return false;
        }
        call(cluster, track, brokerId, brokerEpoch);
        return true;
    }

    /**
     * 4.x: every contact the {@code BrokerHeartbeatTracker} holds for a broker other than
     * {@code brokerId} set to now, as if each had heartbeated at its epoch; a no-op on 3.x.
     */
    @SuppressWarnings("unchecked")
    static void refreshOtherContacts(ClusterControlManager cluster, int brokerId, long nowNs) {
        Method trackerGetter = method(BrokerHeartbeatManager.class, "tracker", 0);
        if (trackerGetter == null) {
            return;
        }
        Object tracker = call(cluster.heartbeatManager(), trackerGetter);
        try {
            Field field = tracker.getClass().getDeclaredField("contactTimes");
            field.setAccessible(true);
            Map<Object, Long> contacts = (Map<Object, Long>) field.get(tracker);
            for (Object key : new java.util.ArrayList<>(contacts.keySet())) {
                Method id = method(key.getClass(), "id", 0);
                if ((Integer) call(key, id) != brokerId) {
                    contacts.put(key, nowNs);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
    }

    /**
     * The {@code eligible.leader.replicas.version} feature (4.x, {@code EligibleLeaderReplicasVersion}):
     * null on a release without it. ELR is on when the feature's finalized level is at least
     * {@code ELRV_1} ({@code FeatureControlManager.isElrFeatureEnabled} at 4.0.1 / 4.1.1).
     */
    static Class<?> elrVersionClass() {
        try {
            return Class.forName("org.apache.kafka.server.common.EligibleLeaderReplicasVersion");
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** {@code ELRV_1}'s feature level, the metadata.version it depends on, and the one from which a fresh format enables it. */
    static Object elrVersionOne() {
        Class<?> type = elrVersionClass();
        try {
            return type.getField("ELRV_1").get(null);
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
    }

    static String elrFeatureName() {
        try {
            return (String) elrVersionClass().getField("FEATURE_NAME").get(null);
        } catch (ReflectiveOperationException e) {
            throw unwrap(e);
        }
    }

    static short elrLevelOne() {
        Object one = elrVersionOne();
        return (Short) call(one, method(one.getClass(), "featureLevel", 0));
    }

    /** The lowest metadata.version {@code ELRV_1} allows (its {@code dependencies()} on metadata.version). */
    @SuppressWarnings("unchecked")
    static MetadataVersion elrMinimumMetadataVersion() {
        Object one = elrVersionOne();
        Map<String, Short> dependencies = (Map<String, Short>) call(one, method(one.getClass(), "dependencies", 0));
        Short level = dependencies.get(MetadataVersion.FEATURE_NAME);
        return level == null ? minimumKraftMetadataVersion() : MetadataVersion.fromFeatureLevel(level);
    }

    /** The metadata.version from which {@code kafka-storage.sh format} enables ELR by default ({@code ELRV_1.bootstrapMetadataVersion()}). */
    static MetadataVersion elrBootstrapMetadataVersion() {
        Object one = elrVersionOne();
        return (MetadataVersion) call(one, method(one.getClass(), "bootstrapMetadataVersion", 0));
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
