#!/usr/bin/env bash
# A throwaway single-node Ceph cluster (one monitor, one in-memory OSD, one RGW)
# on loopback, with every file under one folder. Used by the tests and the bench.
#   ceph-rgw.sh up DIR RGW_PORT   → starts it, prints KEY=VALUE lines for the S3 endpoint
#   ceph-rgw.sh down DIR          → stops every daemon it started and removes DIR
# Needs Debian's radosgw, ceph-mon and ceph-osd (scripts/s3/provision.sh installs them).
set -euo pipefail
# Ceph daemons misbehave when started with fd 0 closed (some spawners close it): give them /dev/null.
exec </dev/null

cmd=${1:?usage: ceph-rgw.sh up DIR PORT | down DIR}
dir=${2:?DIR missing}

stop_all() {
  for pidfile in "$dir"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  # Wait for them to go (their ports and pid files), then force what is left.
  for _ in $(seq 1 20); do
    alive=0
    for pidfile in "$dir"/run/*.pid; do
      [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
  for pidfile in "$dir"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
}

if [ "$cmd" = down ]; then
  stop_all
  rm -rf "$dir"
  exit 0
fi

port=${3:?RGW_PORT missing}
trap 'echo "ceph-rgw.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND; logs in $dir/log" >&2' ERR
for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph-authtool ceph; do
  command -v "$tool" >/dev/null || { echo "ceph-rgw.sh: $tool not found; run: bash scripts/s3/provision.sh" >&2; exit 3; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mon_port=$(free_port)
fsid=$(cat /proc/sys/kernel/random/uuid)
access_key=${CEPH_ACCESS_KEY:-TESTACCESSKEY0000001}
secret_key=${CEPH_SECRET_KEY:-testsecretkey000000000000000000000000001}

mkdir -p "$dir"/{run,log,mon,osd}
conf="$dir/ceph.conf"
cat >"$conf" <<CONF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
ms bind msgr2 = false
ms bind ipv6 = false
public network = 127.0.0.0/8
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd class update on start = false
osd objectstore = memstore
# Cheaper daemons for a test run, where they share two cores with the tests: no debug logging (not even the
# in-memory gather kept for crash dumps), no op tracking, fewer OSD shards and messenger threads. A fixed workload
# (2,000 small objects up, down and deleted, 40 of 4 MiB) took 27% less CPU of Ceph with these.
debug rgw = 0/0
debug rgw sync = 0/0
debug ms = 0/0
debug osd = 0/0
debug memstore = 0/0
debug objecter = 0/0
debug rados = 0/0
debug monc = 0/0
debug mon = 0/0
debug paxos = 0/0
debug auth = 0/0
debug finisher = 0/0
debug heartbeatmap = 0/0
debug perfcounter = 0/0
debug asok = 0/0
debug throttle = 0/0
debug objclass = 0/0
debug context = 0/0
debug optracker = 0/0
debug timer = 0/0
debug buffer = 0/0
debug crush = 0/0
osd enable op tracker = false
osd op num shards = 2
osd op num threads per shard = 1
ms async op threads = 1
# RAM is only used as objects arrive; the bench writes ~8 GB in all.
memstore device bytes = 12884901888
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
mon data = $dir/mon/\$cluster-\$id
osd data = $dir/osd/\$cluster-\$id
keyring = $dir/keyring
erasure code dir = /usr/lib/x86_64-linux-gnu/ceph/erasure-code
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$port
rgw dns name = localhost
rgw enable usage log = false
rgw thread pool size = 64
rgw max chunk size = 4194304
# Overwritten and deleted objects' data is garbage-collected after 2 hours by
# default; in memstore that fills the OSD during the bench. Collect at once.
rgw gc obj min wait = 0
rgw gc processor period = 5
rgw gc processor max time = 5
# Server-side encryption for the encryption tests: SSE-KMS from RGW's testing KMS (a key named in the config, never
# for real use) and SSE-C, over plain HTTP on loopback.
rgw crypt require ssl = false
rgw crypt s3 kms backend = testing
rgw crypt s3 kms encryption keys = testkey-1=YmluCmJvb3N0CmJvb3N0LWJ1aWxkCmNlcGguY29uZgo= testkey-2=aWIKTWFrZWZpbGUKbWFuCm91dApzcmMKVGVzdGluZwo=
CONF
# CEPH_STS=1: STS (AssumeRoleWithWebIdentity) for the identity pass-through test. Only there: with it on,
# RGW answers a wrong secret AccessDenied instead of SignatureDoesNotMatch.
if [ "${CEPH_STS:-}" = 1 ]; then
  printf 'rgw sts key = stsk3y0123456789\nrgw s3 auth use sts = true\n' >>"$conf"
fi
export CEPH_CONF="$conf"

ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
monmaptool --create --addv a "[v1:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
ceph-mon --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" -c "$conf"
ceph-mon -i a -c "$conf" 2>>"$dir/log/mon-start.log"

osd_uuid=$(cat /proc/sys/kernel/random/uuid)
osd_id=$(ceph -c "$conf" osd new "$osd_uuid" --connect-timeout 20)
mkdir -p "$dir/osd/ceph-$osd_id"
ceph-osd -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" -c "$conf" 2>>"$dir/log/osd-mkfs.log"
# On a busy machine the first OSD start now and then fails its first monitor
# command ("wrong fsid"); a second start a moment later succeeds.
for try in 1 2 3 4 5; do
  if ceph-osd -i "$osd_id" -c "$conf" 2>>"$dir/log/osd-start.log"; then break; fi
  [ "$try" = 5 ] && { echo "ceph-rgw.sh: ceph-osd did not start; see $dir/log/osd.$osd_id.log" >&2; exit 1; }
  sleep 1
done

radosgw -n client.rgw -c "$conf" 2>>"$dir/log/rgw-start.log"
radosgw-admin -c "$conf" user create --uid=test --display-name=test \
  --access-key="$access_key" --secret-key="$secret_key" >/dev/null
# A second user with buckets of its own: a second store for the several-stores tests.
radosgw-admin -c "$conf" user create --uid=other --display-name=other \
  --access-key=OTHERACCESSKEY000001 --secret-key=othersecretkey00000000000000000000000001 >/dev/null
# With STS, the test user may create roles and OpenID Connect providers (the test sets up a federated role).
if [ "${CEPH_STS:-}" = 1 ]; then
  radosgw-admin -c "$conf" caps add --uid=test --caps="roles=*;oidc-provider=*" >/dev/null
fi

# Wait until RGW answers HTTP.
for _ in $(seq 1 120); do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    echo "STORE_ENDPOINT_URL=http://127.0.0.1:$port"
    echo "STORE_ACCESS_KEY_ID=$access_key"
    echo "STORE_SECRET_ACCESS_KEY=$secret_key"
    echo "STORE_REGION=us-east-1"
    echo "OTHER_ACCESS_KEY_ID=OTHERACCESSKEY000001"
    echo "OTHER_SECRET_ACCESS_KEY=othersecretkey00000000000000000000000001"
    exit 0
  fi
  sleep 0.25
done
echo "ceph-rgw.sh: radosgw did not answer on port $port; logs in $dir/log" >&2
exit 1
