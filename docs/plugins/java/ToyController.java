// A small KRaft-style controller in Java that isrcheck tests through the exec: plug-in protocol
// (isrcheck.exec/1, docs/exec-protocol.md): one JSON request per line on stdin, one JSON reply per
// line on stdout, exit at end of input. It keeps brokers (registration, broker epoch, fenced,
// controlled shutdown) and partitions (leader, ISR, epochs) and validates AlterPartition the way
// KIP-841 and KIP-903 ask: every proposed ISR member must be registered, unfenced, not shutting
// down and, from version 3, of the stated broker epoch.
//
//   javac -d build docs/plugins/java/ToyController.java
//   isrcheck run --adapter "exec:java -cp build ToyController" --no-differential --examples 100
//
// With --bug the eligibility check forgets fenced and shutting-down brokers (KAFKA-13916, the bug
// KIP-841 fixed): isrcheck reports P-ELIG. Not a model of everything a controller does: it
// declares the operations it leaves out, and isrcheck never generates them.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class ToyController {
    static final class Broker {
        long epoch;
        boolean fenced = true;
        boolean shuttingDown;
    }

    static final class Partition {
        List<Long> replicas;
        List<Long> isr;
        long leader;
        long leaderEpoch;
        long partitionEpoch;
    }

    private final boolean bug;
    private final Map<Long, Broker> brokers = new LinkedHashMap<>();
    private final Map<String, Partition> partitions = new LinkedHashMap<>();
    private long nextEpoch = 1;

    ToyController(boolean bug) {
        this.bug = bug;
    }

    public static void main(String[] args) throws Exception {
        ToyController controller = new ToyController(args.length > 0 && args[0].equals("--bug"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> request = Json.object(Json.parse(line));
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("id", request.get("id"));
            try {
                reply.put("result", controller.handle((String) request.get("method"),
                        Json.object(request.getOrDefault("params", Map.of()))));
            } catch (RuntimeException e) {
                reply.put("error", Map.of("kind", "failure", "message", String.valueOf(e)));
            }
            System.out.println(Json.write(reply));
            System.out.flush();
        }
    }

    Object handle(String method, Map<String, Object> params) {
        switch (method) {
            case "describe":
                return Map.of("protocol", "isrcheck.exec/1", "name", bug ? "toy-controller --bug" : "toy-controller",
                        "levels", List.of("controller"),
                        "unsupported_operations", List.of("create_partitions", "reassign", "elect_leaders",
                                "fail_over_controller", "unregister_broker"));
            case "open":
                brokers.clear();
                partitions.clear();
                nextEpoch = 1;
                return null;
            case "close":
                return null;
            case "execute":
                return execute((String) params.get("op"), Json.object(params.get("args")));
            case "observe":
                return observe((String) params.get("what"), Json.object(params.get("args")));
            default:
                throw new IllegalArgumentException("unknown method " + method);
        }
    }

    Map<String, Object> execute(String op, Map<String, Object> args) {
        Map<String, Object> result = new LinkedHashMap<>();
        long id = args.containsKey("broker") ? Json.number(args.get("broker")) : -1;
        Broker broker = brokers.get(id);
        switch (op) {
            case "register_broker":
                if (broker != null) {
                    leaveIsrs(id);  // a new incarnation: the old one's ISR places are gone
                }
                broker = new Broker();
                broker.epoch = nextEpoch++;
                brokers.put(id, broker);
                result.put("error", "NONE");
                result.put("broker_epoch", broker.epoch);
                return result;
            case "heartbeat":
                if (broker == null || broker.epoch != Json.number(args.get("broker_epoch"))) {
                    return heartbeatReply("STALE_BROKER_EPOCH", true, false);
                }
                if (Boolean.TRUE.equals(args.get("want_shut_down")) && !broker.shuttingDown) {
                    broker.shuttingDown = true;
                    leaveIsrs(id);
                } else if (Boolean.TRUE.equals(args.get("want_fence")) && !broker.fenced) {
                    broker.fenced = true;
                    leaveIsrs(id);
                } else if (Boolean.TRUE.equals(args.get("caught_up")) && broker.fenced && !broker.shuttingDown) {
                    unfence(id, broker);
                }
                return heartbeatReply("NONE", broker.fenced, broker.shuttingDown);
            case "unfence_broker":
                if (broker != null && !broker.shuttingDown) {
                    unfence(id, broker);
                }
                return Map.of();
            case "fence_broker":
                if (broker != null) {
                    broker.fenced = true;
                    leaveIsrs(id);
                }
                return Map.of();
            case "controlled_shutdown":
                if (broker != null) {
                    broker.shuttingDown = true;
                    leaveIsrs(id);
                }
                return Map.of();
            case "create_topic":
                return createTopic((String) args.get("topic"), Json.list(args.get("assignment")));
            case "alter_partition":
                return alterPartition(args);
            default:
                throw new IllegalArgumentException("unsupported operation " + op);
        }
    }

    Map<String, Object> heartbeatReply(String error, boolean fenced, boolean shuttingDown) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("error", error);
        reply.put("is_caught_up", !fenced);
        reply.put("is_fenced", fenced);
        reply.put("should_shut_down", shuttingDown);
        return reply;
    }

    boolean eligible(long id) {
        Broker broker = brokers.get(id);
        return broker != null && !broker.fenced && !broker.shuttingDown;
    }

    void unfence(long id, Broker broker) {
        broker.fenced = false;
        for (Partition p : partitions.values()) {  // a leaderless partition whose ISR names it gets it back
            if (p.leader == -1 && p.isr.contains(id)) {
                p.leader = id;
                p.leaderEpoch++;
                p.partitionEpoch++;
            }
        }
    }

    /** A fenced, shutting-down or replaced broker leaves every ISR it is not the last member of. */
    void leaveIsrs(long id) {
        for (Partition p : partitions.values()) {
            boolean changed = false;
            if (p.isr.contains(id) && p.isr.size() > 1) {
                p.isr.remove(id);
                changed = true;
            }
            if (p.leader == id) {
                p.leader = p.isr.stream().filter(m -> m != id && eligible(m)).findFirst().orElse(-1L);
                p.leaderEpoch++;
                changed = true;
            }
            if (changed) {
                p.partitionEpoch++;
            }
        }
    }

    Map<String, Object> createTopic(String topic, List<Object> assignment) {
        if (partitions.containsKey(topic + "/0")) {
            return Map.of("error", "TOPIC_ALREADY_EXISTS");
        }
        for (int index = 0; index < assignment.size(); index++) {
            Partition p = new Partition();
            p.replicas = new ArrayList<>();
            for (Object replica : Json.list(assignment.get(index))) {
                p.replicas.add(Json.number(replica));
            }
            p.isr = new ArrayList<>(p.replicas.stream().filter(this::eligible).toList());
            if (p.isr.isEmpty()) {
                p.isr.addAll(p.replicas);
            }
            p.leader = p.isr.stream().filter(this::eligible).findFirst().orElse(-1L);
            partitions.put(topic + "/" + index, p);
        }
        return Map.of("error", "NONE");
    }

    Map<String, Object> alterPartition(Map<String, Object> args) {
        long sender = Json.number(args.get("broker"));
        long version = Json.number(args.get("version"));
        Partition p = partitions.get(args.get("topic") + "/" + Json.number(args.get("partition")));
        Broker broker = brokers.get(sender);
        String topLevel = "NONE";
        String error = "NONE";
        if (broker == null || broker.epoch != Json.number(args.get("broker_epoch"))) {
            topLevel = "STALE_BROKER_EPOCH";
        } else if (p == null) {
            error = "UNKNOWN_TOPIC_OR_PARTITION";
        } else if (p.leader != sender || p.leaderEpoch != Json.number(args.get("leader_epoch"))) {
            error = "FENCED_LEADER_EPOCH";
        } else if (p.partitionEpoch != Json.number(args.get("partition_epoch"))) {
            error = "INVALID_UPDATE_VERSION";
        } else {
            List<Long> isr = new ArrayList<>();
            for (Object item : Json.list(args.get("isr"))) {
                long member = item instanceof List<?> pair ? Json.number(pair.get(0)) : Json.number(item);
                long epoch = item instanceof List<?> pair ? Json.number(pair.get(1)) : -1;
                Broker state = brokers.get(member);
                if (!p.replicas.contains(member) || isr.contains(member)) {
                    error = "INVALID_REQUEST";
                    break;
                }
                isr.add(member);
                boolean eligible = state != null && (bug || (!state.fenced && !state.shuttingDown))
                        && (version < 3 || epoch == -1 || epoch == state.epoch);
                if (!eligible) {
                    error = "INELIGIBLE_REPLICA";
                }
            }
            if (error.equals("NONE") && !isr.contains(sender)) {
                error = "INVALID_REQUEST";
            }
            if (error.equals("NONE")) {
                p.isr = isr;
                p.partitionEpoch++;
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("top_level_error", topLevel);
        result.put("error", topLevel.equals("NONE") ? error : null);
        if (p != null && topLevel.equals("NONE")) {
            result.put("leader", p.leader);
            result.put("leader_epoch", p.leaderEpoch);
            result.put("isr", p.isr);
            result.put("partition_epoch", p.partitionEpoch);
            result.put("leader_recovery_state", "RECOVERED");
        }
        return result;
    }

    Map<String, Object> observe(String what, Map<String, Object> args) {
        Map<String, Object> state = new LinkedHashMap<>();
        if (what.equals("broker")) {
            Broker broker = brokers.get(Json.number(args.get("broker")));
            state.put("registered", broker != null);
            state.put("fenced", broker == null || broker.fenced);
            state.put("in_controlled_shutdown", broker != null && broker.shuttingDown);
            state.put("broker_epoch", broker == null ? -1 : broker.epoch);
            return state;
        }
        Partition p = partitions.get(args.get("topic") + "/" + Json.number(args.get("partition")));
        state.put("exists", p != null);
        if (p != null) {
            state.put("leader", p.leader);
            state.put("isr", p.isr);
            state.put("replicas", p.replicas);
            state.put("leader_epoch", p.leaderEpoch);
            state.put("partition_epoch", p.partitionEpoch);
            state.put("leader_recovery_state", "RECOVERED");
            for (String empty : List.of("elr", "last_known_elr", "adding", "removing")) {
                state.put(empty, List.of());
            }
        }
        return state;
    }

    /** Just enough JSON for the protocol: objects, arrays, strings without escapes, integers, true/false/null. */
    static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            return new Json(text).value();
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(Object value) {
            return (Map<String, Object>) value;
        }

        @SuppressWarnings("unchecked")
        static List<Object> list(Object value) {
            return (List<Object>) value;
        }

        static long number(Object value) {
            return ((Number) value).longValue();
        }

        private Object value() {
            skip();
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                for (skip(); text.charAt(at) != '}'; skip()) {
                    String key = (String) value();
                    skip();
                    at++;  // ':'
                    map.put(key, value());
                    skip();
                    if (text.charAt(at) == ',') {
                        at++;
                    }
                }
                at++;
                return map;
            }
            if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                for (skip(); text.charAt(at) != ']'; skip()) {
                    list.add(value());
                    skip();
                    if (text.charAt(at) == ',') {
                        at++;
                    }
                }
                at++;
                return list;
            }
            if (c == '"') {
                int end = text.indexOf('"', at + 1);
                String s = text.substring(at + 1, end);
                at = end + 1;
                return s;
            }
            for (String word : List.of("true", "false", "null")) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "-0123456789".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            return Long.parseLong(text.substring(start, at));
        }

        private void skip() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        static String write(Object value) {
            if (value == null) {
                return "null";
            }
            if (value instanceof String s) {
                return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
            }
            if (value instanceof Map<?, ?> map) {
                List<String> items = new ArrayList<>();
                map.forEach((k, v) -> items.add(write(String.valueOf(k)) + ":" + write(v)));
                return "{" + String.join(",", items) + "}";
            }
            if (value instanceof List<?> list) {
                List<String> items = new ArrayList<>();
                list.forEach(v -> items.add(write(v)));
                return "[" + String.join(",", items) + "]";
            }
            return String.valueOf(value);
        }
    }
}
