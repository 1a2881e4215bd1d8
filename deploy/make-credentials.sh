#!/usr/bin/env bash
# Makes what spgemmd needs to serve other hosts: a private CA, a server
# certificate it signed, and a tokens file with one admin token.
#
#   deploy/make-credentials.sh DIR [NAME ...]
#
# DIR gets (DIR mode 0700, every file 0600; keep it out of version control):
#   ca.crt    the CA's certificate: what clients trust (spgemm --tls --ca DIR/ca.crt)
#   ca.key    the CA's key: signs more certificates (client certificates for --tls_client_ca)
#   tls.crt   the server's certificate (spgemmd --tls_cert), for localhost, 127.0.0.1,
#             spgemmd (the compose service), spgemmd.spgemm.svc.cluster.local (the
#             Kubernetes Service) and every NAME given
#   tls.key   its key (spgemmd --tls_key)
#   tokens    one admin token (spgemmd --tokens_file); add a line per tenant
#             (docs/configuration.md#tokens-file)
# and prints the admin token. Files already there are kept: run it again to add
# nothing, delete DIR to start over. The image runs as uid 10001: for Docker,
# `sudo chown -R 10001:10001 DIR` lets it read them (Kubernetes takes them
# into a Secret instead). Needs openssl.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
dir=$1
shift
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

# EC P-256 keys: small, fast, and taken by gRPC's TLS and every client.
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

if [ ! -f ca.crt ]; then
  openssl req -x509 "${newkey[@]}" -keyout ca.key -out ca.crt -days 3650 -subj "/CN=spgemmd CA" 2>/dev/null
fi

if [ ! -f tls.crt ]; then
  names="DNS:localhost,IP:127.0.0.1,DNS:spgemmd,DNS:spgemmd.spgemm.svc.cluster.local"
  for n in "$@"; do
    if [[ $n =~ ^[0-9.]+$ || $n == *:* ]]; then names+=",IP:$n"; else names+=",DNS:$n"; fi
  done
  openssl req "${newkey[@]}" -keyout tls.key -out tls.csr -subj "/CN=spgemmd" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$names" > tls.ext
  openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 -extfile tls.ext \
    -out tls.crt 2>/dev/null
  rm -f tls.csr tls.ext
fi

if [ ! -f tokens ]; then
  token=$(openssl rand -hex 32)
  {
    echo "# spgemmd tokens: TOKEN TENANT [admin] [device_bytes=SIZE] [host_bytes=SIZE] [running_jobs=N] [queued_jobs=N]"
    echo "$token admin admin"
  } > tokens
  echo "admin token: $token"
fi

chmod 600 ca.crt ca.key tls.crt tls.key tokens
