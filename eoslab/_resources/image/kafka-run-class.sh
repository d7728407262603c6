#!/usr/bin/env bash
# Run a class of the pinned Kafka release with the variables of Apache Kafka's bin/kafka-run-class.sh:
# KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS.
if [ $# -lt 1 ]; then
  echo "USAGE: $0 classname [opts]"
  exit 1
fi
base_dir=$(cd "$(dirname "$0")/.." && pwd)
CLASSPATH="${CLASSPATH:+$CLASSPATH:}$base_dir/libs/*"
: "${KAFKA_HEAP_OPTS:=-Xmx256M}"
: "${KAFKA_JVM_PERFORMANCE_OPTS:=-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
if [ -z "${KAFKA_LOG4J_OPTS:-}" ]; then
  # Tools log through tools-log4j2.yaml; before the first start has written config/, the image's default.
  tools_log4j=$base_dir/config/tools-log4j2.yaml
  [ -f "$tools_log4j" ] || tools_log4j=/etc/kafka/docker/tools-log4j2.yaml
  KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=$tools_log4j"
fi
# shellcheck disable=SC2086  # the *_OPTS variables are lists of flags
exec java $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_GC_LOG_OPTS:-} ${KAFKA_JMX_OPTS:-} \
  -Dkafka.logs.dir="${LOG_DIR:-$base_dir/logs}" $KAFKA_LOG4J_OPTS -cp "$CLASSPATH" ${KAFKA_OPTS:-} "$@"
