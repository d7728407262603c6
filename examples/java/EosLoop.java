/*
 * A consume-transform-produce loop, exactly once, with Kafka's Java client (kafka-clients 4.x): the same program as
 * examples/eos_loop.py, so the two clients can be read side by side.
 *
 *     java -cp "$(eoslab classpath)" examples/java/EosLoop.java --input orders --output orders-upper \
 *         --group orders-upper --transactional-id orders-upper-1
 *
 * (With Kafka installed, `-cp "$KAFKA_HOME/libs/*"` does the same; Java 17+ runs the file without a build.)
 *
 * Per batch: beginTransaction, one send per input (the value upper-cased), sendOffsetsToTransaction (per partition
 * the NEXT offset to read), commitTransaction. The outputs and the inputs' offsets commit together or not at all,
 * so a processor killed anywhere and restarted with the same transactional.id and group carries on from the
 * committed offsets: a read_committed consumer of the output reads each input's output once.
 *
 * Errors, by the classes the Java client gives them (KafkaProducer's javadoc; KIP-1050 in kafka-clients 4.1+):
 * - ProducerFencedException: a newer instance with the same transactional.id took over: stop;
 * - InvalidConfigurationException (in 4.x also the parent of AuthorizationException and UnsupportedVersionException):
 *   no retry can help: stop;
 * - ApplicationRecoverableException (e.g. InvalidProducerEpochException): close both clients and start them again
 *   (initTransactions aborts what was open; the new consumer starts at the committed offsets);
 * - TimeoutException from commitTransaction: the commit may already be durable: the SAME call again, never abort;
 * - any other KafkaException (TransactionAbortableException among them): abort, seek the consumer back to the
 *   committed offsets, redo the batch. Without the seek the consumer's position stays past the aborted inputs and
 *   their outputs are never written: a lost write that Kafka's own older examples carry.
 *
 * Unlike librdkafka (the Python loop's client), the Java client 4.x runs transactions on the cluster's
 * transaction.version 2 (KIP-890) where the cluster has finalized it: each transaction bumps the producer epoch.
 */

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApplicationRecoverableException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class EosLoop {
    static final String COURSE_CLUSTER = "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093";
    static final Duration POLL = Duration.ofMillis(500);

    final Map<String, String> args;
    KafkaConsumer<String, String> consumer;
    KafkaProducer<String, String> producer;
    int committed, aborted;
    long assignedAt; // System.nanoTime() when the group first gave this instance partitions; 0 before

    EosLoop(Map<String, String> args) {
        this.args = args;
    }

    /** The consumer's settings, each EOS-relevant one with why it is there. */
    Properties consumerSettings() {
        Properties p = new Properties();
        p.put("bootstrap.servers", args.get("--bootstrap-servers"));
        p.put("group.id", args.get("--group"));
        // Offsets advance only inside the transaction (sendOffsetsToTransaction), never on a timer outside it.
        p.put("enable.auto.commit", "false");
        // The Java client's default is read_uncommitted (librdkafka's is read_committed): an input from an aborted
        // or still open transaction would be processed. Set it.
        p.put("isolation.level", "read_committed");
        p.put("auto.offset.reset", "earliest");
        p.put("max.poll.records", args.get("--batch"));
        // A killed processor never leaves its group: its successor gets the partitions when this session expires.
        p.put("session.timeout.ms", "6000");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }

    /** The producer's settings, each EOS-relevant one with why it is there. */
    Properties producerSettings() {
        Properties p = new Properties();
        p.put("bootstrap.servers", args.get("--bootstrap-servers"));
        // The same id across restarts: initTransactions fences the previous instance and aborts what it left open.
        // Implies enable.idempotence=true and acks=all.
        p.put("transactional.id", args.get("--transactional-id"));
        // An open transaction holds back every read_committed reader of the output: the coordinator aborts one
        // left open this long.
        p.put("transaction.timeout.ms", "30000");
        // How long a transactional call may block before a TimeoutException (the default is 60 s).
        p.put("max.block.ms", "10000");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }

    void start() {
        consumer = new KafkaConsumer<>(consumerSettings());
        producer = new KafkaProducer<>(producerSettings());
        consumer.subscribe(List.of(args.get("--input")), new ConsumerRebalanceListener() {
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                if (assignedAt == 0 && !partitions.isEmpty()) assignedAt = System.nanoTime();
            }

            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }
        });
        producer.initTransactions(); // fences an older instance, aborts its open transaction
    }

    void close() {
        consumer.close();
        producer.close();
    }

    /** Per partition, the last record's offset + 1: the NEXT record to read (the last one's own would redo it). */
    static Map<TopicPartition, OffsetAndMetadata> nextOffsets(List<ConsumerRecord<String, String>> records) {
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<String, String> r : records) {
            next.merge(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1),
                (a, b) -> a.offset() >= b.offset() ? a : b);
        }
        return next;
    }

    /** A commit that timed out may already be durable: the same call again, never an abort. */
    void commit() {
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                System.err.println("  commitTransaction: " + e.getMessage() + " (retriable), the same call again");
            }
        }
    }

    /** Seek every assigned partition back to its committed offset (the start if none): the batch is read again. */
    void rewind() {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> offsets = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata o = offsets.get(tp);
            if (o != null) consumer.seek(tp, o.offset());
            else consumer.seekToBeginning(List.of(tp));
        }
    }

    /** --work-ms: pretend each record takes this long to transform. */
    void pretendToWork() {
        try {
            Thread.sleep(Long.parseLong(args.get("--work-ms")));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One batch in one transaction. Throws what must stop or restart the loop (see the class comment). */
    void process(List<ConsumerRecord<String, String>> records, int txn) {
        Map<TopicPartition, OffsetAndMetadata> offsets = nextOffsets(records);
        try {
            producer.beginTransaction();
            for (ConsumerRecord<String, String> r : records) {
                pretendToWork();
                String value = r.value() == null ? "" : r.value().toUpperCase();
                producer.send(new ProducerRecord<>(args.get("--output"), r.key(), value));
            }
            System.out.printf("txn %d: %d records sent%n", txn, records.size());
            // The group metadata is fetched right before the call: the coordinator refuses a stale one (KIP-447).
            producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
            commit();
            committed++;
            System.out.printf("txn %d: %d records committed with offsets %s%n", txn, records.size(), offsets);
        } catch (InvalidConfigurationException | ApplicationRecoverableException e) {
            throw e; // run() stops, or starts both clients again
        } catch (KafkaException e) {
            producer.abortTransaction(); // an abort that fails stops the loop: it throws on
            rewind();
            aborted++;
            System.out.printf("txn %d: %d records ABORTED (%s), consumer rewound%n", txn, records.size(), e);
        }
    }

    /** True when no input came for ``idle`` seconds since the group first gave this instance partitions. */
    boolean idleFor(double idle, long lastInput) {
        return assignedAt != 0 && (System.nanoTime() - Math.max(lastInput, assignedAt)) / 1e9 > idle;
    }

    /** Batches until no input came for --idle seconds (or for ever without it). Returns the exit status. */
    int run() {
        double idle = Double.parseDouble(args.getOrDefault("--idle", "Infinity"));
        long lastInput = 0;
        start();
        System.out.printf("transactional.id '%s' ready; reading %s%n", args.get("--transactional-id"), args.get("--input"));
        try {
            while (!idleFor(idle, lastInput)) {
                List<ConsumerRecord<String, String>> records = new ArrayList<>();
                consumer.poll(POLL).forEach(records::add);
                if (records.isEmpty()) continue;
                lastInput = System.nanoTime();
                try {
                    process(records, committed + aborted + 1);
                } catch (ApplicationRecoverableException e) {
                    if (e instanceof ProducerFencedException) throw e;
                    System.err.println("restarting both clients on " + e);
                    close();
                    start();
                }
            }
        } catch (KafkaException e) {
            System.err.println("stopping on " + e);
            close();
            return 1;
        }
        close();
        System.out.printf("%d transactions committed, %d aborted%n", committed, aborted);
        return 0;
    }

    static final String USAGE = String.join("\n",
        "usage: java -cp \"$(eoslab classpath)\" examples/java/EosLoop.java --input TOPIC --output TOPIC",
        "           --group GROUP --transactional-id ID [--bootstrap-servers HOSTS] [--batch N] [--idle SECONDS]",
        "           [--work-ms MS]",
        "  --bootstrap-servers  default: the course cluster, " + COURSE_CLUSTER,
        "  --batch              records per transaction, at most (default: 10)",
        "  --idle               stop after this many seconds without input, counted from the first partitions given",
        "                       (default: run until killed)",
        "  --work-ms            pretend each record takes this long to transform (default: 0)");

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>(Map.of("--bootstrap-servers", COURSE_CLUSTER, "--batch", "10", "--work-ms", "0"));
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].equals("--help") || !argv[i].startsWith("--") || i + 1 == argv.length) {
                System.out.println(USAGE);
                System.exit(argv[i].equals("--help") ? 0 : 2);
            }
            args.put(argv[i], argv[++i]);
        }
        for (String required : List.of("--input", "--output", "--group", "--transactional-id")) {
            if (!args.containsKey(required)) {
                System.err.println("EosLoop: " + required + " is required\n" + USAGE);
                System.exit(2);
            }
        }
        System.exit(new EosLoop(args).run());
    }
}
