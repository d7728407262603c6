// The Java KafkaProducer (the pinned 4.4 client) behind eoslab.java_producer.JavaProducer: one producer, commands on stdin.
//
// Why a child JVM and not JPype: see eoslab/java_producer.py. Compiled once by the kit (javac, cached
// in ~/.cache/eoslab), run against the pinned kafka-clients jar.
//
// Protocol: one command per line, fields separated by TABs; one JSON object answered per line.
//   init <timeout_ms> | begin | send <topic> <partition> <value> | flush
//   offsets <group> <topic> <partition> <offset> [<member id> <generation or member epoch>]
//   | commit | abort | id | close | exit
// Arguments of the program: producer properties as key=value.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public final class TxnClient {
    private static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private static String error(Throwable t) {
        Throwable e = t;
        while (e instanceof ExecutionException && e.getCause() != null) e = e.getCause();
        String cause = e.getCause() == null ? null : e.getCause().getClass().getSimpleName();
        return "{\"ok\":false,\"error\":" + quote(e.getClass().getSimpleName()) + ",\"message\":" + quote(e.getMessage())
            + ",\"cause\":" + quote(cause) + "}";
    }

    /** Producer id and epoch as the client holds them (no public API: read from its TransactionManager). */
    private static String idAndEpoch(KafkaProducer<String, String> producer) {
        try {
            Field f = KafkaProducer.class.getDeclaredField("transactionManager");
            f.setAccessible(true);
            Object tm = f.get(producer);
            Method m = tm.getClass().getDeclaredMethod("producerIdAndEpoch");
            m.setAccessible(true);
            Object pe = m.invoke(tm);
            long id = pe.getClass().getField("producerId").getLong(pe);
            short epoch = pe.getClass().getField("epoch").getShort(pe);
            return "{\"ok\":true,\"producer_id\":" + id + ",\"producer_epoch\":" + epoch + "}";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "{\"ok\":false,\"error\":" + quote(e.getClass().getSimpleName()) + ",\"message\":" + quote(e.getMessage()) + "}";
        }
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        for (String a : args) {
            int i = a.indexOf('=');
            props.put(a.substring(0, i), a.substring(i + 1));
        }
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        List<Future<RecordMetadata>> pending = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("{\"ok\":true,\"ready\":true}");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            String answer;
            try {
                switch (f[0]) {
                    case "init":
                        producer.initTransactions();
                        answer = idAndEpoch(producer);
                        break;
                    case "begin":
                        producer.beginTransaction();
                        answer = "{\"ok\":true}";
                        break;
                    case "send":
                        pending.add(producer.send(new ProducerRecord<>(f[1], Integer.parseInt(f[2]), null, f[3])));
                        answer = "{\"ok\":true}";
                        break;
                    case "flush": {
                        producer.flush();
                        StringBuilder b = new StringBuilder("{\"ok\":true,\"delivered\":[");
                        for (int i = 0; i < pending.size(); i++) {
                            if (i > 0) b.append(',');
                            try {
                                RecordMetadata md = pending.get(i).get();
                                b.append("{\"partition\":").append(md.partition()).append(",\"offset\":").append(md.offset())
                                    .append(",\"error\":null}");
                            } catch (ExecutionException e) {
                                b.append("{\"partition\":-1,\"offset\":-1,\"error\":")
                                    .append(quote(e.getCause().getClass().getSimpleName())).append('}');
                            }
                        }
                        pending.clear();
                        answer = b.append("]}").toString();
                        break;
                    }
                    case "offsets": {
                        // Without a member: metadata a group coordinator does not check. With one (f[5] the member
                        // id, f[6] its generation or KIP-848 member epoch): the metadata KIP-447 checks.
                        ConsumerGroupMetadata group = f.length > 6
                            ? new ConsumerGroupMetadata(f[1], Integer.parseInt(f[6]), f[5], java.util.Optional.empty())
                            : new ConsumerGroupMetadata(f[1]);
                        producer.sendOffsetsToTransaction(
                            Map.of(new TopicPartition(f[2], Integer.parseInt(f[3])), new OffsetAndMetadata(Long.parseLong(f[4]))),
                            group);
                        answer = "{\"ok\":true}";
                        break;
                    }
                    case "commit":
                        producer.commitTransaction();
                        pending.clear();
                        answer = idAndEpoch(producer);
                        break;
                    case "abort":
                        producer.abortTransaction();
                        pending.clear();
                        answer = idAndEpoch(producer);
                        break;
                    case "id":
                        answer = idAndEpoch(producer);
                        break;
                    case "close":
                        producer.close(Duration.ofSeconds(5));
                        answer = "{\"ok\":true}";
                        break;
                    case "exit":
                        producer.close(Duration.ZERO);
                        System.out.println("{\"ok\":true}");
                        System.out.flush();
                        return;
                    default:
                        answer = "{\"ok\":false,\"error\":\"UnknownCommand\",\"message\":" + quote(f[0]) + "}";
                }
            } catch (RuntimeException e) {  // KafkaException, IllegalStateException ...: the answer names it
                answer = error(e);
            }
            System.out.println(answer);
            System.out.flush();
        }
        producer.close(Duration.ZERO);
    }
}
