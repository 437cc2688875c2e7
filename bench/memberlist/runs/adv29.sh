# adv29: the scripts behind runs/adv29.txt (runall.sh, then inns.sh and sampler.sh, which it calls from /work/adv29tmp)
#!/bin/bash
# adv29: wait for round20.done, build, run everything
while [ ! -e /work/b29/round20.done ]; do sleep 5; done
echo "start $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
cd /work/wt/adv29/bench/memberlist && go build -o /tmp/benchadv . || exit 1
echo "built $(date +%T)"
K=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
L="-scenarios steady -name-len 64 -name-style host"
cd /work/adv29tmp
# long windows, one library per network namespace (its own lo counters)
for lib in fdkit memberlist; do
  unshare -n ./inns.sh long8enc-$lib  -seed 126000704 -n 8  -settle 60s -window 60s -runs 3 -libs $lib -key $K $L &
  unshare -n ./inns.sh long8pl-$lib   -seed 126000705 -n 8  -settle 60s -window 60s -runs 3 -libs $lib $L &
  unshare -n ./inns.sh long32enc-$lib -seed 126000706 -n 32 -settle 60s -window 60s -runs 2 -libs $lib -key $K $L &
done
# 16 s side-by-side rows as the README ran them
(
 for spec in "126000700 8 5 -key $K" "126000701 8 5" "126000702 32 3 -key $K" "126000703 32 3"; do
   set -- $spec; S=$1; N=$2; R=$3; shift 3
   echo "### N $N seed $S runs $R $* load $(cut -d' ' -f1 /proc/loadavg) $(date +%T)"
   /tmp/benchadv -seed $S -n $N -window 16s -runs $R -libs fdkit,memberlist $L "$@" 2>&1
 done
) > /work/adv29tmp/short.txt
wait
echo "end $(date +%T)"
# ---- inns.sh
# usage: inns.sh TAG benchargs...  (run inside unshare -n)
TAG=$1; shift
ip link set lo up
/work/adv29tmp/sampler.sh > /work/adv29tmp/$TAG.samp &
SP=$!
/tmp/benchadv "$@" > /work/adv29tmp/$TAG.out 2> >(while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > /work/adv29tmp/$TAG.err)
kill $SP
wait
# ---- sampler.sh
# inside a netns: every second, epoch, lo tx packets, tx bytes, Udp OutDatagrams, Tcp OutSegs
while :; do
  lo=$(awk '/lo:/{sub(/:/,": "); print $11, $10}' /proc/net/dev)
  u=$(awk '/^Udp:/{n++} /^Udp:/&&n==2{print $5}' /proc/net/snmp)
  t=$(awk '/^Tcp:/{n++} /^Tcp:/&&n==2{print $12}' /proc/net/snmp)
  echo "$(date +%s.%N) $lo $u $t"
  sleep 1
done
