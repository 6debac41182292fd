package org.apache.kafka.controller;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestDataJsonConverter;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestDataJsonConverter;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.AlterPartitionResponseDataJsonConverter;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestDataJsonConverter;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestDataJsonConverter;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestDataJsonConverter;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestDataJsonConverter;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.metadata.UnregisterBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * isrcheck's harness around Kafka's own controller classes: one long-lived JVM speaking the
 * {@code isrcheck.exec/1} JSON-lines protocol (docs/exec-protocol.md) on stdin/stdout.
 *
 * <p>It builds the controller pieces as {@code ReplicationControlManagerTest.ReplicationControlTestContext}
 * does (a {@code SnapshotRegistry}, {@code FeatureControlManager}, {@code ClusterControlManager} with a
 * mock clock, {@code ConfigurationControlManager}, {@code ReplicationControlManager}), and drives each
 * operation the way {@code QuorumController} does: it calls the manager method, appends the
 * {@code ControllerResult}'s records to an in-memory metadata log at consecutive offsets and replays
 * them into the managers ({@code QuorumController.replay}). Requests are the release's own request
 * classes, read from JSON by its generated converters at the API version a client would send and
 * passed once through the wire encoding of that version. Release differences live in
 * {@link IsrcheckCompat}.
 */
public final class IsrcheckHarness {
    static final String PROTOCOL = "isrcheck.exec/1";
    static final long CAUGHT_UP_OFFSET = 1L << 62;
    static final Uuid UNKNOWN_TOPIC_ID = Uuid.fromString("C63AAAAAQACAAAAAAAAAAA");
    static final String CLUSTER_ID = "isrcheckjvmAAAAAAAAAAA";
    /** Rounds of every operation run before the first request (-Disrcheck.warmup=N; 0: none). */
    static final int WARM_UP_ROUNDS = 150;
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final PrintStream out;
    private final String release;

    // One controller's state; rebuilt by open() and by fail_over_controller (replay of the log).
    private IsrcheckManualTime time;
    private LogContext logContext;
    private SnapshotRegistry snapshotRegistry;
    private FeatureControlManager featureControl;
    private ClusterControlManager clusterControl;
    private ConfigurationControlManager configurationControl;
    private ReplicationControlManager replicationControl;
    private final AtomicReference<ReplicationControlManager> replicationRef = new AtomicReference<>();
    private final List<ApiMessageAndVersion> log = new ArrayList<>();
    private long nextOffset;
    private MetadataVersion metadataVersion;
    private long sessionTimeoutMs;
    private int minIsr;
    private boolean eligibleLeaderReplicas;
    private Map<String, Object> staticConfig = new HashMap<>();
    private final Map<String, Uuid> incarnations = new HashMap<>();
    private final Map<Integer, Uuid> logDirs = new HashMap<>();

    IsrcheckHarness(PrintStream out) {
        this.out = out;
        String version = AppInfoParser.getVersion();
        String[] parts = version.split("\\.");
        // classes without kafka-version.properties (e.g. a build's class directories alone) say "unknown": any release
        this.release = parts.length >= 2 ? parts[0] + "." + parts[1] : null;
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocolOut = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        System.setOut(System.err); // anything Kafka or a logger prints goes to stderr, never into the protocol
        IsrcheckHarness harness = new IsrcheckHarness(protocolOut);
        int rounds = Integer.getInteger("isrcheck.warmup", WARM_UP_ROUNDS);
        Thread warmUp = null;
        if (harness.release != null && rounds > 0) {
            // Beside the requests, not before them: isrcheck and this JVM take turns, so the
            // warm-up runs on the core that would otherwise wait (its own managers, no shared state)
            IsrcheckHarness throwaway = new IsrcheckHarness(new PrintStream(java.io.OutputStream.nullOutputStream()));
            warmUp = new Thread(() -> throwaway.warmUp(harness.release, rounds), "isrcheck-warm-up");
            warmUp.setDaemon(true);
            warmUp.start();
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            harness.handle(line);
        }
        if (warmUp != null) {
            warmUp.join(); // a run that ends at once (the launcher's CDS archive run) still loads every class
        }
    }

    /**
     * Runs every operation a few hundred times on a throwaway controller, on its own thread beside
     * the first requests, so that a short campaign does not spend its first seconds in the interpreter. Its state is
     * discarded (every run starts with {@code open}, a fresh controller); failures are only logged.
     */
    void warmUp(String release, int rounds) {
        String[] ops = {
            "{\"op\":\"register_broker\",\"args\":{\"broker\":1,\"incarnation\":\"a\"}}",
            "{\"op\":\"register_broker\",\"args\":{\"broker\":2,\"incarnation\":\"a\"}}",
            "{\"op\":\"register_broker\",\"args\":{\"broker\":3,\"incarnation\":\"a\"}}",
            "{\"op\":\"unfence_broker\",\"args\":{\"broker\":1}}",
            "{\"op\":\"unfence_broker\",\"args\":{\"broker\":2}}",
            "{\"op\":\"unfence_broker\",\"args\":{\"broker\":3}}",
            "{\"op\":\"create_topic\",\"args\":{\"topic\":\"w\",\"assignment\":[[1,2,3],[2,3,1]]}}",
            "{\"op\":\"create_partitions\",\"args\":{\"topic\":\"w\",\"count\":3,\"assignment\":[[3,1,2]]}}",
            "{\"op\":\"alter_partition\",\"args\":{\"version\":2,\"broker\":1,\"broker_epoch\":1,\"topic\":\"w\","
                + "\"partition\":0,\"leader_epoch\":0,\"partition_epoch\":0,\"isr\":[[1,-1],[2,-1]]}}",
            "{\"op\":\"elect_leaders\",\"args\":{\"type\":\"preferred\",\"partitions\":[[\"w\",1]]}}",
            "{\"op\":\"reassign\",\"args\":{\"topic\":\"w\",\"partition\":1,\"replicas\":[1,2]}}",
            "{\"op\":\"controlled_shutdown\",\"args\":{\"broker\":2}}",
            "{\"op\":\"controlled_shutdown\",\"args\":{\"broker\":2}}",
            "{\"op\":\"fence_broker\",\"args\":{\"broker\":3}}",
            "{\"op\":\"heartbeat\",\"args\":{\"broker\":1,\"broker_epoch\":1,\"want_fence\":false,"
                + "\"want_shut_down\":false,\"caught_up\":true}}",
            "{\"op\":\"fail_over_controller\",\"args\":{}}",
            "{\"op\":\"unregister_broker\",\"args\":{\"broker\":3}}",
        };
        try {
            for (int round = 0; round < rounds; round++) {
                handle("{\"id\":0,\"method\":\"open\",\"params\":{\"release\":\"" + release + "\",\"config\":{}}}");
                for (String op : ops) { // as isrcheck sends them: each answered with a snapshot
                    String params = op.substring(0, op.length() - 1) + ",\"snapshot\":true}";
                    handle("{\"id\":0,\"method\":\"execute\",\"params\":" + params + "}");
                }
            }
        } catch (RuntimeException e) {
            System.err.println("warm-up: " + e);
        }
    }

    void handle(String line) {
        ObjectNode reply = NODES.objectNode();
        JsonNode request;
        try {
            request = JSON.readTree(line);
        } catch (Exception e) {
            reply.putNull("id");
            reply.set("error", error("bad_request", "not a request"));
            emit(reply);
            return;
        }
        reply.set("id", request.get("id"));
        String method = request.path("method").asText();
        JsonNode params = request.path("params");
        try {
            JsonNode result;
            switch (method) {
                case "describe":
                    result = describe();
                    break;
                case "open":
                    open(params.path("release").asText(), params.path("config"));
                    result = NODES.nullNode();
                    break;
                case "execute":
                    result = execute(params.path("op").asText(), params.path("args"));
                    if (params.path("snapshot").asBoolean(false)) {
                        ObjectNode both = NODES.objectNode();
                        both.set("result", result);
                        both.set("snapshot", snapshot());
                        result = both;
                    }
                    break;
                case "observe":
                    result = observe(params.path("what").asText(), params.path("args"));
                    break;
                case "close":
                    result = NODES.nullNode();
                    break;
                case "snapshot":
                    result = snapshot();
                    break;
                default:
                    throw new IllegalArgumentException("unknown method " + method);
            }
            reply.set("result", result);
        } catch (Unsupported e) {
            reply.set("error", error("unsupported_configuration", e.getMessage()));
        } catch (Throwable e) {
            java.io.StringWriter trace = new java.io.StringWriter();
            e.printStackTrace(new java.io.PrintWriter(trace));
            System.err.println(trace);
            reply.set("error", error("failure", e.getClass().getName() + ": " + e.getMessage()));
        }
        emit(reply);
    }

    private void emit(ObjectNode reply) {
        out.print(reply.toString());
        out.print('\n');
        out.flush();
    }

    private static ObjectNode error(String kind, String message) {
        ObjectNode e = NODES.objectNode();
        e.put("kind", kind);
        e.put("message", message == null ? "" : message);
        return e;
    }

    static final class Unsupported extends RuntimeException {
        Unsupported(String message) {
            super(message);
        }
    }

    JsonNode describe() {
        ObjectNode d = NODES.objectNode();
        d.put("protocol", PROTOCOL);
        d.put("name", "kafka-jvm " + AppInfoParser.getVersion());
        d.putArray("levels").add("controller");
        if (release == null) {
            d.putNull("releases");
        } else {
            d.putArray("releases").add(release);
        }
        d.putArray("unsupported_operations");
        d.putArray("capabilities").add("snapshot");
        d.put("kafka_version", AppInfoParser.getVersion());
        d.put("kafka_commit", AppInfoParser.getCommitId());
        return d;
    }

    // ------------------------------------------------------------------------------ open / fail-over

    void open(String wanted, JsonNode config) {
        String[] parts = wanted.split("\\.");
        String wantedLine = parts.length >= 2 ? parts[0] + "." + parts[1] : wanted;
        if (release != null && !wantedLine.equals(release)) {
            throw new Unsupported("these classes are Kafka " + AppInfoParser.getVersion() + ", not " + wanted);
        }
        Set<String> known = Set.of("unclean_leader_election_enable", "eligible_leader_replicas", "min_insync_replicas",
            "metadata_version", "broker_session_timeout_ms");
        Iterator<String> names = config.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!known.contains(name)) {
                throw new Unsupported("unknown config key " + name);
            }
        }
        MetadataVersion latest = IsrcheckCompat.latestProductionMetadataVersion();
        if (config.hasNonNull("metadata_version")) {
            try {
                metadataVersion = MetadataVersion.fromVersionString(config.get("metadata_version").asText());
            } catch (IllegalArgumentException e) {
                throw new Unsupported("Kafka " + release + " has no metadata.version " + config.get("metadata_version").asText());
            }
            if (metadataVersion.compareTo(latest) > 0) {
                throw new Unsupported("metadata.version " + metadataVersion + " is newer than Kafka " + release + " supports");
            }
            if (metadataVersion.compareTo(IsrcheckCompat.minimumKraftMetadataVersion()) < 0) {
                throw new Unsupported("metadata.version " + metadataVersion + " is below KRaft's minimum");
            }
        } else {
            metadataVersion = latest;
        }
        eligibleLeaderReplicas = eligibleLeaderReplicas(config.get("eligible_leader_replicas"));
        minIsr = config.path("min_insync_replicas").asInt(1);
        sessionTimeoutMs = config.path("broker_session_timeout_ms").asLong(9000);
        staticConfig = new HashMap<>();
        staticConfig.put("unclean.leader.election.enable",
            String.valueOf(config.path("unclean_leader_election_enable").asBoolean(false)));
        staticConfig.put("min.insync.replicas", String.valueOf(minIsr));
        incarnations.clear();
        logDirs.clear();
        log.clear();
        nextOffset = 0;
        time = new IsrcheckManualTime();
        build();
        clusterControl.activate();
        // Bootstrap as a freshly formatted cluster's first controller does: the metadata.version record,
        // and on 4.x with ELR the eligible.leader.replicas.version record (kafka-storage.sh format --feature).
        List<ApiMessageAndVersion> bootstrap = new ArrayList<>();
        bootstrap.add(new ApiMessageAndVersion(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
            .setFeatureLevel(metadataVersion.featureLevel()), (short) 0));
        if (eligibleLeaderReplicas) {
            bootstrap.add(new ApiMessageAndVersion(new FeatureLevelRecord().setName(IsrcheckCompat.elrFeatureName())
                .setFeatureLevel(IsrcheckCompat.elrLevelOne()), (short) 0));
        }
        append(bootstrap);
    }

    /**
     * Whether this run has eligible leader replicas (KIP-966). 3.x: never (its feature, where present,
     * needs a metadata.version no 3.x release ships). 4.x: the {@code eligible.leader.replicas.version}
     * feature at level 1, which needs metadata.version {@code ELRV_1.dependencies()} (4.0-IV1); unset,
     * the level {@code kafka-storage.sh format} picks: on from {@code ELRV_1.bootstrapMetadataVersion()}
     * (4.1-IV0), so on by default on 4.1 and off on 4.0 (EligibleLeaderReplicasVersion at 4.0.1 / 4.1.1).
     */
    private boolean eligibleLeaderReplicas(JsonNode wanted) {
        boolean available = IsrcheckCompat.elrVersionClass() != null && (release == null || !release.startsWith("3."));
        if (wanted == null || wanted.isNull()) {
            return available && metadataVersion.compareTo(IsrcheckCompat.elrBootstrapMetadataVersion()) >= 0;
        }
        if (!wanted.asBoolean(false)) {
            return false;
        }
        if (!available) {
            throw new Unsupported("eligible leader replicas cannot be enabled on Kafka " + release);
        }
        if (metadataVersion.compareTo(IsrcheckCompat.elrMinimumMetadataVersion()) < 0) {
            throw new Unsupported("eligible leader replicas cannot be enabled on Kafka " + release + " with metadata.version "
                + metadataVersion + " (needs " + IsrcheckCompat.elrMinimumMetadataVersion() + ")");
        }
        return true;
    }

    /** Fresh managers wired as in ReplicationControlTestContext (not yet active). */
    private void build() {
        logContext = new LogContext("[isrcheck] ");
        snapshotRegistry = new SnapshotRegistry(logContext);
        featureControl = IsrcheckCompat.featureControl(logContext, snapshotRegistry, metadataVersion);
        clusterControl = IsrcheckCompat.clusterControl(logContext, CLUSTER_ID, time, snapshotRegistry,
            sessionTimeoutMs * 1_000_000L, featureControl, replicationRef);
        configurationControl = new ConfigurationControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(snapshotRegistry)
            .setKafkaConfigSchema(IsrcheckCompat.configSchema())
            .setStaticConfig(staticConfig)
            .setNodeId(0)
            .build();
        replicationControl = IsrcheckCompat.replicationControl(logContext, snapshotRegistry, configurationControl,
            clusterControl, featureControl, minIsr);
        replicationRef.set(replicationControl);
    }

    /**
     * {@code fail_over_controller}: a standby controller that replayed the whole log becomes active —
     * fresh managers, every record replayed at its offset, then {@code ClusterControlManager.activate()}
     * rebuilds the heartbeat soft state from the registrations (controller.md §4.5). The clock goes on.
     */
    private void failOver() {
        List<ApiMessageAndVersion> records = new ArrayList<>(log);
        build();
        long offset = 0;
        for (ApiMessageAndVersion record : records) {
            replay(record.message(), offset++);
        }
        clusterControl.activate();
    }

    // ------------------------------------------------------------------------------ the metadata log

    /** Appends a batch at consecutive offsets and replays it; returns the batch's last offset (or the last written one). */
    private long append(List<ApiMessageAndVersion> records) {
        for (ApiMessageAndVersion record : records) {
            long offset = nextOffset++;
            log.add(record);
            replay(record.message(), offset);
        }
        return nextOffset - 1;
    }

    /** {@code QuorumController.replay}: each record type to the manager that owns it. */
    private void replay(ApiMessage message, long offset) {
        MetadataRecordType type = MetadataRecordType.fromId(message.apiKey());
        switch (type) {
            case REGISTER_BROKER_RECORD:
                clusterControl.replay((RegisterBrokerRecord) message, offset);
                break;
            case UNREGISTER_BROKER_RECORD:
                clusterControl.replay((UnregisterBrokerRecord) message);
                break;
            case TOPIC_RECORD:
                replicationControl.replay((TopicRecord) message);
                break;
            case PARTITION_RECORD:
                replicationControl.replay((PartitionRecord) message);
                break;
            case CONFIG_RECORD:
                configurationControl.replay((ConfigRecord) message);
                break;
            case PARTITION_CHANGE_RECORD:
                replicationControl.replay((PartitionChangeRecord) message);
                break;
            case FENCE_BROKER_RECORD:
                clusterControl.replay((FenceBrokerRecord) message);
                break;
            case UNFENCE_BROKER_RECORD:
                clusterControl.replay((UnfenceBrokerRecord) message);
                break;
            case REMOVE_TOPIC_RECORD:
                replicationControl.replay((RemoveTopicRecord) message);
                break;
            case FEATURE_LEVEL_RECORD:
                featureControl.replay((FeatureLevelRecord) message);
                break;
            case BROKER_REGISTRATION_CHANGE_RECORD:
                clusterControl.replay((BrokerRegistrationChangeRecord) message);
                break;
            case NO_OP_RECORD:
                break;
            default:
                throw new IllegalStateException("the harness does not replay " + type);
        }
    }

    // ------------------------------------------------------------------------------ requests

    private static ControllerRequestContext context(ApiKeys api, short version) {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
            .setClientId("isrcheck");
        return new ControllerRequestContext(header, KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
    }

    /** The request as the controller would decode it: encoded and decoded once at {@code version}. */
    @SuppressWarnings("unchecked")
    private static <T extends ApiMessage> T wire(T message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        buffer.flip();
        try {
            Constructor<?> c = READERS.computeIfAbsent(message.getClass(), IsrcheckHarness::reader);
            return (T) c.newInstance(new ByteBufferAccessor(buffer), version);
        } catch (ReflectiveOperationException e) {
            throw IsrcheckCompat.unwrap(e);
        }
    }

    private static final Map<Class<?>, Constructor<?>> READERS = new java.util.concurrent.ConcurrentHashMap<>();

    private static Constructor<?> reader(Class<?> type) {
        try {
            return type.getConstructor(Readable.class, short.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(type + " has no (Readable, short) constructor", e);
        }
    }

    private static String errorName(short code) {
        return Errors.forCode(code).name();
    }

    private static String errorName(Throwable e) {
        return Errors.forException(e).name();
    }

    // ------------------------------------------------------------------------------ operations

    JsonNode execute(String op, JsonNode args) {
        return executeOne(op, args);
    }

    private JsonNode executeOne(String op, JsonNode args) {
        switch (op) {
            case "register_broker":
                return registerBroker(args);
            case "heartbeat":
                return heartbeat(args.path("broker").asInt(), args.path("broker_epoch").asLong(),
                    args.path("caught_up").asBoolean(true), args.path("want_fence").asBoolean(false),
                    args.path("want_shut_down").asBoolean(false));
            case "unfence_broker":
                return heartbeat(args.path("broker").asInt(), currentEpoch(args.path("broker").asInt()), true, false, false);
            case "controlled_shutdown":
                return heartbeat(args.path("broker").asInt(), currentEpoch(args.path("broker").asInt()), true, false, true);
            case "fence_broker":
                fenceBySessionExpiry(args.path("broker").asInt());
                return NODES.objectNode();
            case "unregister_broker":
                return unregisterBroker(args.path("broker").asInt());
            case "create_topic":
                return createTopic(args);
            case "create_partitions":
                return createPartitions(args);
            case "alter_partition":
                return alterPartition(args);
            case "elect_leaders":
                return electLeaders(args);
            case "reassign":
                return reassign(args);
            case "fail_over_controller":
                failOver();
                return NODES.objectNode();
            default:
                throw new IllegalArgumentException("unknown operation " + op);
        }
    }

    private long currentEpoch(int broker) {
        BrokerRegistration registration = clusterControl.registration(broker);
        return registration == null ? -1 : registration.epoch();
    }

    /**
     * BrokerRegistration (controller.md §4.1): {@code ClusterControlManager.registerBroker} with the
     * broker epoch {@code QuorumController} gives, the next write offset. The request is the release's
     * newest BrokerRegistration version, with one log directory per broker kept across incarnations.
     */
    private JsonNode registerBroker(JsonNode args) {
        int broker = args.path("broker").asInt();
        String label = args.path("incarnation").asText();
        Uuid incarnation = incarnations.computeIfAbsent(broker + "/" + label, k -> Uuid.randomUuid());
        short version = ApiKeys.BROKER_REGISTRATION.latestVersion();
        org.apache.kafka.common.protocol.types.Schema[] schemas = BrokerRegistrationRequestData.SCHEMAS;
        ObjectNode request = NODES.objectNode();
        request.put("brokerId", broker);
        request.put("clusterId", CLUSTER_ID);
        request.put("incarnationId", incarnation.toString());
        ArrayNode listeners = request.putArray("listeners");
        ObjectNode listener = listeners.addObject();
        listener.put("name", "PLAINTEXT");
        listener.put("host", "localhost");
        listener.put("port", 10000 + broker % 50000);
        listener.put("securityProtocol", 0);
        ArrayNode features = request.putArray("features");
        FinalizedControllerFeatures finalized = featureControl.finalizedFeatures(Long.MAX_VALUE);
        for (String name : finalized.featureNames()) {
            short level = finalized.get(name).orElse((short) 0);
            ObjectNode feature = features.addObject();
            feature.put("name", name);
            feature.put("minSupportedVersion", name.equals(MetadataVersion.FEATURE_NAME) ? level : 0);
            feature.put("maxSupportedVersion", level);
        }
        request.putNull("rack");
        if (IsrcheckCompat.hasField(schemas, version, "is_migrating_zk_broker")) {
            request.put("isMigratingZkBroker", false);
        }
        if (IsrcheckCompat.hasField(schemas, version, "log_dirs")) {
            request.putArray("logDirs").add(logDirs.computeIfAbsent(broker, b -> Uuid.randomUuid()).toString());
        }
        if (IsrcheckCompat.hasField(schemas, version, "previous_broker_epoch")) {
            request.put("previousBrokerEpoch", args.hasNonNull("previous_broker_epoch")
                ? args.get("previous_broker_epoch").asLong() : -1L);
        }
        BrokerRegistrationRequestData data = wire(BrokerRegistrationRequestDataJsonConverter.read(request, version), version);
        ObjectNode result = NODES.objectNode();
        try {
            ControllerResult<BrokerRegistrationReply> r = IsrcheckCompat.registerBroker(clusterControl, data, nextOffset,
                finalized, version);
            append(r.records());
            // 4.x: the broker's first heartbeat, which it sends as soon as it is registered
            // (BrokerLifecycleManager.BrokerRegistrationResponseHandler at 4.1.1), gives the new (id, epoch) its contact; the reference and
            // kafka-wire's ghosts (heartbeating every registered broker) count the registration as
            // that contact (controller.md §4.1 check 3). Registration alone records none on 4.x.
            IsrcheckCompat.trackBrokerHeartbeat(clusterControl, broker, r.response().epoch());
            result.put("error", "NONE");
            result.put("broker_epoch", r.response().epoch());
        } catch (ApiException e) {
            result.put("error", errorName(e));
            result.put("broker_epoch", -1);
        }
        return result;
    }

    /**
     * BrokerHeartbeat as {@code QuorumController.processBrokerHeartbeat} runs it (controller.md §4.2):
     * no RegisterBrokerRecord known → STALE_BROKER_EPOCH; else
     * {@code ReplicationControlManager.processBrokerHeartbeat(request, registerBrokerRecordOffset)}, the
     * records appended, and for a broker in controlled shutdown the batch's end offset handed to
     * {@code BrokerHeartbeatManager.maybeUpdateControlledShutdownOffset} (step 9).
     */
    private JsonNode heartbeat(int broker, long epoch, boolean caughtUp, boolean wantFence, boolean wantShutDown) {
        IsrcheckCompat.trackBrokerHeartbeat(clusterControl, broker, epoch); // 4.x: first, outside the write event
        OptionalLong registerOffset = clusterControl.registerBrokerRecordOffset(broker);
        long offset = caughtUp ? CAUGHT_UP_OFFSET : (registerOffset.isPresent() ? registerOffset.getAsLong() - 1 : -1);
        BrokerHeartbeatRequestData request = wire(new BrokerHeartbeatRequestData().setBrokerId(broker).setBrokerEpoch(epoch)
            .setCurrentMetadataOffset(offset).setWantFence(wantFence).setWantShutDown(wantShutDown),
            ApiKeys.BROKER_HEARTBEAT.latestVersion());
        ObjectNode result = NODES.objectNode();
        try {
            if (!registerOffset.isPresent()) {
                throw new StaleBrokerEpochException("Receive a heartbeat from broker " + broker
                    + " before registration");
            }
            ControllerResult<BrokerHeartbeatReply> r = replicationControl.processBrokerHeartbeat(request,
                registerOffset.getAsLong());
            long end = append(r.records());
            BrokerHeartbeatReply reply = r.response();
            if (reply.inControlledShutdown()) {
                clusterControl.heartbeatManager().maybeUpdateControlledShutdownOffset(broker, end);
            }
            result.put("error", "NONE");
            result.put("is_caught_up", reply.isCaughtUp());
            result.put("is_fenced", reply.isFenced());
            result.put("should_shut_down", reply.shouldShutDown());
        } catch (ApiException e) {
            result.put("error", errorName(e));
            result.put("is_caught_up", false);
            result.put("is_fenced", true);
            result.put("should_shut_down", false);
        }
        return result;
    }

    /**
     * {@code fence_broker}: this broker's session expires, it alone (controller.md §4.3). The mock clock
     * moves past the session timeout while every other unfenced broker keeps heartbeating without a
     * state change ({@code BrokerHeartbeatManager.touch} with its current fenced flag and reported
     * offset); then {@code ReplicationControlManager.maybeFenceOneStaleBroker} runs, as the
     * controller's scheduled check does, until it finds nothing. A broker that is already fenced has no
     * session to expire on 3.x, so nothing happens to it. On 4.x sessions are contacts per (broker,
     * epoch) in {@code BrokerHeartbeatTracker}: the broker's current epoch is given a contact (as its
     * last heartbeat would have; fenced or not, as 4.x tracks every heartbeat) that then expires, every
     * other tracked contact is renewed, and {@code maybeFenceOneStaleBroker} removes the expired ones
     * (old epochs without records, the current one with {@code handleBrokerFenced}).
     */
    private void fenceBySessionExpiry(int broker) {
        BrokerHeartbeatManager heartbeats = clusterControl.heartbeatManager();
        BrokerRegistration registration = clusterControl.registration(broker);
        if (registration != null) {
            IsrcheckCompat.trackBrokerHeartbeat(clusterControl, broker, registration.epoch());
        }
        time.sleep(sessionTimeoutMs + 1);
        IsrcheckCompat.refreshOtherContacts(clusterControl, broker, time.nanoseconds());
        for (BrokerHeartbeatManager.BrokerHeartbeatState state : new ArrayList<>(heartbeats.brokers())) {
            if (state.id() != broker && !state.fenced()) {
                // the soft-state effect of a heartbeat that leaves it UNFENCED or CONTROLLED_SHUTDOWN
                heartbeats.touch(state.id(), false, IsrcheckCompat.metadataOffset(state));
            }
        }
        for (int i = 0; i < 1000; i++) {
            // <Void> on 3.x: done when it writes nothing. <Boolean> on 4.x: true while it removed an
            // expired contact, which for an old epoch or an unknown broker writes nothing
            // (ReplicationControlManager.maybeFenceOneStaleBroker at 4.0.1 / 4.1.1)
            ControllerResult<?> r = replicationControl.maybeFenceOneStaleBroker();
            boolean more = r.response() instanceof Boolean ? (Boolean) r.response() : !r.records().isEmpty();
            if (!more) {
                return;
            }
            append(r.records());
        }
        throw new IllegalStateException("maybeFenceOneStaleBroker did not settle");
    }

    /** UnregisterBroker: {@code ReplicationControlManager.unregisterBroker} (controller.md §4.4). */
    private JsonNode unregisterBroker(int broker) {
        ObjectNode result = NODES.objectNode();
        try {
            append(replicationControl.unregisterBroker(broker).records());
            result.put("error", "NONE");
        } catch (ApiException e) {
            result.put("error", errorName(e));
        }
        return result;
    }

    /** CreateTopics with an explicit assignment (controller.md §5): {@code ReplicationControlManager.createTopics}. */
    private JsonNode createTopic(JsonNode args) {
        short version = ApiKeys.CREATE_TOPICS.latestVersion();
        ObjectNode request = NODES.objectNode();
        ObjectNode topic = request.putArray("topics").addObject();
        String name = args.path("topic").asText();
        topic.put("name", name);
        topic.put("numPartitions", -1);
        topic.put("replicationFactor", -1);
        ArrayNode assignments = topic.putArray("assignments");
        int index = 0;
        for (JsonNode replicas : args.path("assignment")) {
            ObjectNode a = assignments.addObject();
            a.put("partitionIndex", index++);
            a.set("brokerIds", replicas);
        }
        ArrayNode configs = topic.putArray("configs");
        Iterator<Map.Entry<String, JsonNode>> entries = args.path("configs").fields();
        while (entries.hasNext()) {
            Map.Entry<String, JsonNode> entry = entries.next();
            ObjectNode c = configs.addObject();
            c.put("name", entry.getKey());
            c.put("value", entry.getValue().isBoolean() ? String.valueOf(entry.getValue().asBoolean())
                : entry.getValue().asText());
        }
        request.put("timeoutMs", 30000);
        request.put("validateOnly", false);
        CreateTopicsRequestData data = wire(CreateTopicsRequestDataJsonConverter.read(request, version), version);
        ObjectNode result = NODES.objectNode();
        try {
            Set<String> describable = new HashSet<>();
            describable.add(name);
            ControllerResult<CreateTopicsResponseData> r = IsrcheckCompat.createTopics(replicationControl,
                context(ApiKeys.CREATE_TOPICS, version), data, describable);
            append(r.records());
            result.put("error", errorName(r.response().topics().iterator().next().errorCode()));
        } catch (ApiException e) {
            result.put("error", errorName(e));
        }
        return result;
    }

    /** CreatePartitions with an explicit assignment: {@code ReplicationControlManager.createPartitions}. */
    private JsonNode createPartitions(JsonNode args) {
        short version = ApiKeys.CREATE_PARTITIONS.latestVersion();
        ObjectNode request = NODES.objectNode();
        ObjectNode topic = request.putArray("topics").addObject();
        topic.put("name", args.path("topic").asText());
        topic.put("count", args.path("count").asInt());
        ArrayNode assignments = topic.putArray("assignments");
        for (JsonNode replicas : args.path("assignment")) {
            assignments.addObject().set("brokerIds", replicas);
        }
        request.put("timeoutMs", 30000);
        request.put("validateOnly", false);
        CreatePartitionsRequestData data = wire(CreatePartitionsRequestDataJsonConverter.read(request, version), version);
        ObjectNode result = NODES.objectNode();
        try {
            ControllerResult<List<CreatePartitionsResponseData.CreatePartitionsTopicResult>> r =
                IsrcheckCompat.createPartitions(replicationControl, context(ApiKeys.CREATE_PARTITIONS, version),
                    new ArrayList<>(data.topics()));
            append(r.records());
            result.put("error", errorName(r.response().get(0).errorCode()));
        } catch (ApiException e) {
            result.put("error", errorName(e));
        }
        return result;
    }

    /**
     * AlterPartition at {@code version} (controller.md §2): a version the release does not serve is
     * answered UNSUPPORTED_VERSION without reaching the controller (as its ApiVersions would tell the
     * broker); v0/v1 name the topic, v2/v3 give its id; v3 carries member broker epochs. The request
     * goes to {@code ReplicationControlManager.alterPartition}; an exception (e.g. STALE_BROKER_EPOCH
     * from {@code checkBrokerEpoch}) is a top-level error; the response is read as encoded at that version.
     */
    private JsonNode alterPartition(JsonNode args) {
        short version = (short) args.path("version").asInt();
        ObjectNode result = NODES.objectNode();
        if (version < ApiKeys.ALTER_PARTITION.oldestVersion() || version > ApiKeys.ALTER_PARTITION.latestVersion()) {
            result.put("top_level_error", "UNSUPPORTED_VERSION");
            result.putNull("error");
            return result;
        }
        String topicName = args.path("topic").asText();
        ObjectNode request = NODES.objectNode();
        request.put("brokerId", args.path("broker").asInt());
        request.put("brokerEpoch", args.path("broker_epoch").asLong());
        ObjectNode topic = request.putArray("topics").addObject();
        if (version < 2) {
            topic.put("topicName", topicName);
        } else {
            Uuid id = replicationControl.getTopicId(topicName);
            topic.put("topicId", (id == null ? UNKNOWN_TOPIC_ID : id).toString());
        }
        ObjectNode partition = topic.putArray("partitions").addObject();
        partition.put("partitionIndex", args.path("partition").asInt());
        partition.put("leaderEpoch", args.path("leader_epoch").asInt());
        partition.put("partitionEpoch", args.path("partition_epoch").asInt());
        if (version >= 3) {
            ArrayNode members = partition.putArray("newIsrWithEpochs");
            for (JsonNode member : args.path("isr")) {
                ObjectNode m = members.addObject();
                m.put("brokerId", member.get(0).asInt());
                m.put("brokerEpoch", member.get(1).asLong());
            }
        } else {
            ArrayNode members = partition.putArray("newIsr");
            for (JsonNode member : args.path("isr")) {
                members.add(member.get(0).asInt());
            }
        }
        if (version >= 1) {
            String lrs = args.path("leader_recovery_state").asText("RECOVERED");
            partition.put("leaderRecoveryState", lrs.equals("RECOVERING") ? 1 : 0);
        }
        AlterPartitionRequestData data = wire(AlterPartitionRequestDataJsonConverter.read(request, version), version);
        AlterPartitionResponseData response;
        try {
            ControllerResult<AlterPartitionResponseData> r = replicationControl.alterPartition(
                context(ApiKeys.ALTER_PARTITION, version), data);
            append(r.records());
            response = r.response();
        } catch (ApiException e) {
            result.put("top_level_error", errorName(e));
            result.putNull("error");
            return result;
        }
        JsonNode encoded = AlterPartitionResponseDataJsonConverter.write(wire(response, version), version);
        short top = (short) encoded.path("errorCode").asInt(0);
        JsonNode topics = encoded.path("topics");
        if (top != 0 || topics.size() == 0 || topics.get(0).path("partitions").size() == 0) {
            result.put("top_level_error", errorName(top));
            result.putNull("error");
            return result;
        }
        JsonNode p = topics.get(0).path("partitions").get(0);
        result.put("top_level_error", "NONE");
        result.put("error", errorName((short) p.path("errorCode").asInt(0)));
        result.put("leader", p.path("leaderId").asInt(-1));
        result.put("leader_epoch", p.path("leaderEpoch").asInt(0));
        result.set("isr", p.path("isr").isArray() ? p.get("isr") : NODES.arrayNode());
        result.put("partition_epoch", p.path("partitionEpoch").asInt(0));
        result.put("leader_recovery_state", p.path("leaderRecoveryState").asInt(0) == 1 ? "RECOVERING" : "RECOVERED");
        return result;
    }

    /** ElectLeaders: {@code ReplicationControlManager.electLeaders} (controller.md §3.2). */
    private JsonNode electLeaders(JsonNode args) {
        short version = ApiKeys.ELECT_LEADERS.latestVersion();
        ObjectNode request = NODES.objectNode();
        request.put("electionType", args.path("type").asText().equals("preferred") ? 0 : 1);
        Map<String, ArrayNode> grouped = new java.util.LinkedHashMap<>();
        ArrayNode topics = request.putArray("topicPartitions");
        for (JsonNode tp : args.path("partitions")) {
            String topic = tp.get(0).asText();
            grouped.computeIfAbsent(topic, t -> {
                ObjectNode entry = topics.addObject();
                entry.put("topic", t);
                return entry.putArray("partitions");
            }).add(tp.get(1).asInt());
        }
        request.put("timeoutMs", 30000);
        ElectLeadersRequestData data = wire(ElectLeadersRequestDataJsonConverter.read(request, version), version);
        ObjectNode result = NODES.objectNode();
        ArrayNode errors = result.putArray("errors");
        String top;
        Map<String, String> found = new HashMap<>();
        try {
            ControllerResult<ElectLeadersResponseData> r = replicationControl.electLeaders(data);
            append(r.records());
            top = errorName(r.response().errorCode());
            for (ElectLeadersResponseData.ReplicaElectionResult topic : r.response().replicaElectionResults()) {
                for (ElectLeadersResponseData.PartitionResult p : topic.partitionResult()) {
                    found.put(topic.topic() + "\u0000" + p.partitionId(), errorName(p.errorCode()));
                }
            }
        } catch (ApiException e) {
            top = errorName(e);
        }
        for (JsonNode tp : args.path("partitions")) {
            ArrayNode row = errors.addArray();
            row.add(tp.get(0).asText());
            row.add(tp.get(1).asInt());
            String error = found.get(tp.get(0).asText() + "\u0000" + tp.get(1).asInt());
            row.add(error != null ? error : (top.equals("NONE") ? "UNKNOWN_SERVER_ERROR" : top));
        }
        return result;
    }

    /** AlterPartitionReassignments: {@code ReplicationControlManager.alterPartitionReassignments} (§3.4). */
    private JsonNode reassign(JsonNode args) {
        short version = ApiKeys.ALTER_PARTITION_REASSIGNMENTS.latestVersion();
        ObjectNode request = NODES.objectNode();
        request.put("timeoutMs", 30000);
        if (IsrcheckCompat.hasField(AlterPartitionReassignmentsRequestData.SCHEMAS, version,
                "allow_replication_factor_change")) {
            request.put("allowReplicationFactorChange", true);
        }
        ObjectNode topic = request.putArray("topics").addObject();
        topic.put("name", args.path("topic").asText());
        ObjectNode partition = topic.putArray("partitions").addObject();
        partition.put("partitionIndex", args.path("partition").asInt());
        partition.set("replicas", args.path("replicas"));
        AlterPartitionReassignmentsRequestData data = wire(
            AlterPartitionReassignmentsRequestDataJsonConverter.read(request, version), version);
        ObjectNode result = NODES.objectNode();
        try {
            ControllerResult<AlterPartitionReassignmentsResponseData> r = replicationControl.alterPartitionReassignments(data);
            append(r.records());
            AlterPartitionReassignmentsResponseData response = r.response();
            if (response.errorCode() != 0) {
                result.put("error", errorName(response.errorCode()));
            } else {
                result.put("error", errorName(response.responses().get(0).partitions().get(0).errorCode()));
            }
        } catch (ApiException e) {
            result.put("error", errorName(e));
        }
        return result;
    }

    // ------------------------------------------------------------------------------ observation

    /** Partition and broker registrations read from the managers' in-memory state (controller.md §1.1, §1.2). */
    /**
     * Every partition and broker registration at once (exec/1's optional {@code snapshot}
     * capability, docs/exec-protocol.md: sent with each {@code execute} answer, so that a step's
     * observations cost no further round trip): the same fields as {@code observe}, keyed
     * {@code "topic/partition"} and by broker id.
     */
    JsonNode snapshot() {
        ObjectNode result = NODES.objectNode();
        ObjectNode partitions = result.putObject("partitions");
        for (Map.Entry<String, Uuid> topic : replicationControl.findAllTopicIds(Long.MAX_VALUE).entrySet()) {
            for (int index = 0; ; index++) {
                PartitionRegistration p = replicationControl.getPartition(topic.getValue(), index);
                if (p == null) {
                    break;
                }
                partitions.set(topic.getKey() + "/" + index, partition(p));
            }
        }
        ObjectNode brokers = result.putObject("brokers");
        for (Map.Entry<Integer, BrokerRegistration> broker : clusterControl.brokerRegistrations().entrySet()) {
            brokers.set(String.valueOf(broker.getKey()), broker(broker.getValue()));
        }
        return result;
    }

    private static ObjectNode broker(BrokerRegistration registration) {
        ObjectNode result = NODES.objectNode();
        result.put("registered", registration != null);
        result.put("fenced", registration == null || registration.fenced());
        result.put("in_controlled_shutdown", registration != null && registration.inControlledShutdown());
        result.put("broker_epoch", registration == null ? -1 : registration.epoch());
        return result;
    }

    private static ObjectNode partition(PartitionRegistration p) {
        ObjectNode result = NODES.objectNode();
        result.put("exists", true);
        result.put("leader", p.leader);
        result.set("isr", ints(p.isr));
        result.set("replicas", ints(p.replicas));
        result.put("leader_epoch", p.leaderEpoch);
        result.put("partition_epoch", p.partitionEpoch);
        result.put("leader_recovery_state", p.leaderRecoveryState.name());
        result.set("elr", ints(IsrcheckCompat.intArrayField(p, "elr")));
        result.set("last_known_elr", ints(IsrcheckCompat.intArrayField(p, "lastKnownElr")));
        result.set("adding", ints(p.addingReplicas));
        result.set("removing", ints(p.removingReplicas));
        return result;
    }

    JsonNode observe(String what, JsonNode args) {
        if (what.equals("broker")) {
            return broker(clusterControl.registration(args.path("broker").asInt()));
        }
        ObjectNode result = NODES.objectNode();
        if (what.equals("partition")) {
            Uuid id = replicationControl.getTopicId(args.path("topic").asText());
            PartitionRegistration p = id == null ? null : replicationControl.getPartition(id, args.path("partition").asInt(0));
            if (p == null) {
                result.put("exists", false);
                return result;
            }
            return partition(p);
        }
        throw new IllegalArgumentException("cannot observe " + what);
    }

    private static ArrayNode ints(int[] values) {
        ArrayNode array = NODES.arrayNode();
        for (int v : values) {
            array.add(v);
        }
        return array;
    }
}
