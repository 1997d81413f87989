"""The image's HEALTHCHECK: ask the node's gRPC health service whether it serves.

    python /opt/belote/healthcheck.py [HOST:PORT]     (default: $BELOTE_HEALTH_ADDRESS or 127.0.0.1:50051)

Exit 0 when the overall status ("" service) is SERVING, 1 otherwise (NOT_SERVING while the node
drains, no answer within 3 s, a refused connection). It is what grpc_health_probe does, with the
grpc_health stub the image already has. Plaintext only: a node serving TLS is checked by its
orchestrator (Kubernetes' grpc probes) or with grpc_health_probe -tls.
"""

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    address = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BELOTE_HEALTH_ADDRESS", "127.0.0.1:50051")
    try:
        with grpc.insecure_channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""),
                                                              timeout=3)
    except grpc.RpcError as e:
        print(f"unhealthy: {address}: {e.code().name}", file=sys.stderr)
        return 1
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"unhealthy: {address}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
