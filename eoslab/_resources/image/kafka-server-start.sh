#!/usr/bin/env bash
# Start a broker or controller (kafka.Kafka) in the foreground; default heap 1 GB as in Apache Kafka.
if [ $# -lt 1 ]; then
  echo "USAGE: $0 server.properties [--override property=value]*"
  exit 1
fi
base_dir=$(cd "$(dirname "$0")/.." && pwd)
: "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base_dir/config/log4j2.yaml}"
: "${KAFKA_HEAP_OPTS:=-Xmx1G -Xms1G}"
export KAFKA_LOG4J_OPTS KAFKA_HEAP_OPTS
exec "$base_dir/bin/kafka-run-class.sh" kafka.Kafka "$@"
