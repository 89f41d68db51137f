# shakedown in an image of its own: the static binary that "make build"
# makes (CGO_ENABLED=0), the CA certificates TLS targets are checked
# against, and nothing else. Build it with "make image".
#
# It runs as a numeric non-root user and writes nothing outside
# SHAKEDOWN_HOME (/tmp), so it runs on a read-only root file system with
# /tmp on an emptyDir (Kubernetes) or a tmpfs (docker run --read-only
# --tmpfs /tmp).

FROM debian:bookworm-slim AS certs
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*

FROM scratch
COPY --from=certs /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# An empty /tmp (mode 1777), for runs without a volume there.
COPY --from=certs /tmp /tmp
COPY bin/shakedown /shakedown
ENV SHAKEDOWN_HOME=/tmp \
    HOME=/tmp \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENTRYPOINT ["/shakedown"]
CMD ["help"]
