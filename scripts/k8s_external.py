"""Write deploy/k8s/external's names and node count: the files of the overlay that depend on them.

    python3 scripts/k8s_external.py --domain arena.example.org --replicas 2

The overlay's nodes are reached each at a load balancer of its own, so a node more is a Service
more; this writes them all, with the domain everywhere it appears (the nodes' advertised names, the
Services' DNS names, the Ingress's host, the certificate's names). Run it again to scale, then
``kubectl apply -k deploy/k8s/external`` (and delete the Services of the nodes gone:
``kubectl delete service belote-arena-node-N``). Standard library only: it runs where kubectl does.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

OVERLAY = Path(__file__).resolve().parent.parent / "deploy" / "k8s" / "external"
NODE = "belote-arena-node"
#: the Secret with the certificate (DOMAIN and *.DOMAIN) the nodes and the Ingress serve
TLS_SECRET = "belote-arena-tls"
#: a DNS name: labels of letters, digits and inner hyphens, at least two
DOMAIN = re.compile(r"(?=.{1,200}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
HEADER = "# Written by scripts/k8s_external.py --domain {domain} --replicas {replicas}: run it to change.\n"


def render(domain: str, replicas: int) -> dict[str, str]:
    """The overlay's files that name the domain or count the nodes, by file name."""
    head = HEADER.format(domain=domain, replicas=replicas)
    services = "---\n".join(_service(domain, i) for i in range(replicas))
    return {
        "domain.yaml": head + f"""\
# The domain the nodes advertise their names under (node.yaml) and the pages' origin (node-args.yaml).
apiVersion: v1
kind: ConfigMap
metadata:
  name: belote-arena
data:
  BELOTE_DOMAIN: {domain}
""",
        "replicas.yaml": head + f"""\
# As many nodes as nodes.yaml has Services.
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {NODE}
spec:
  replicas: {replicas}
""",
        "nodes.yaml": head + f"""\
# One load balancer per node, each to its own pod (by the name the StatefulSet gives it), at the name
# the node advertises: bots dial every node there. TCP straight to the node, which serves TLS: a
# bot's stream lasts hours, and no proxy in the way cuts it on a reload or an idle timeout.
# externalTrafficPolicy Local: the node sees each bot's own address, which its per-address bounds
# count by. external-dns makes the DNS record from the annotation (or make it yourself: the
# Service's EXTERNAL-IP, kubectl get service {NODE}-0).
""" + services,
        "ingress.yaml": head + f"""\
# The pages, the JSON API and /metrics (counts: no token, no card) at https://{domain}, TLS ending
# here; the nodes behind it speak plain HTTP inside the cluster. The cluster's default IngressClass,
# unless you name one (spec.ingressClassName). A browser's sign-in lives on the node that made it:
# with several nodes, ask your controller for cookie affinity (ingress-nginx:
# nginx.ingress.kubernetes.io/affinity: cookie) or it signs in again on another. Event streams
# stay open as long as a match: raise the controller's read timeout to an hour (ingress-nginx:
# nginx.ingress.kubernetes.io/proxy-read-timeout: "3600"); the node asks proxies not to buffer them.
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: belote-arena
  labels:
    app.kubernetes.io/name: belote-arena
    app.kubernetes.io/component: pages
spec:
  tls:
    - hosts:
        - {domain}
      secretName: {TLS_SECRET}
  rules:
    - host: {domain}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: belote-arena
                port:
                  name: http
""",
        "certificate.yaml": head + f"""\
# For cert-manager (not in kustomization.yaml: it needs cert-manager's CRDs):
#   kubectl apply -f deploy/k8s/external/certificate.yaml
# The Secret {TLS_SECRET} for the nodes and the Ingress, from an issuer you have: a wildcard name
# needs an ACME DNS-01 solver (Let's Encrypt), or use your own CA's issuer. Or make the Secret
# yourself: kubectl create secret tls {TLS_SECRET} --cert=chain.pem --key=key.pem
# The nodes read it at start: after each renewal (cert-manager renews 30 days ahead),
# kubectl rollout restart statefulset {NODE}.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {TLS_SECRET}
spec:
  secretName: {TLS_SECRET}
  dnsNames:
    - {domain}
    - "*.{domain}"
  privateKey:
    algorithm: ECDSA
    size: 256
    rotationPolicy: Always
  issuerRef:
    kind: ClusterIssuer
    name: letsencrypt
""",
    }


def _service(domain: str, index: int) -> str:
    pod = f"{NODE}-{index}"
    return f"""\
apiVersion: v1
kind: Service
metadata:
  name: {pod}
  labels:
    app.kubernetes.io/name: belote-arena
    app.kubernetes.io/component: node-address
  annotations:
    external-dns.alpha.kubernetes.io/hostname: {pod}.{domain}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector:
    app.kubernetes.io/name: belote-arena
    app.kubernetes.io/component: node
    statefulset.kubernetes.io/pod-name: {pod}
  ports:
    - name: grpc
      port: 443
      targetPort: grpc
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", required=True,
                        help="the pages' host; node N is belote-arena-node-N.DOMAIN (e.g. arena.example.org)")
    parser.add_argument("--replicas", type=int, default=2, help="how many nodes (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OVERLAY,
                        help="the overlay's folder (default: %(default)s)")
    args = parser.parse_args(argv)
    domain = args.domain.lower().rstrip(".")
    if not DOMAIN.fullmatch(domain):
        parser.error(f"--domain must be a DNS name such as arena.example.org, not {args.domain!r}")
    if not 2 <= args.replicas <= 100:
        # one node replaced (an update, a drain) leaves another to play, and the PDB keeps one
        parser.error(f"--replicas must be from 2 to 100, not {args.replicas}")
    for name, text in render(domain, args.replicas).items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
