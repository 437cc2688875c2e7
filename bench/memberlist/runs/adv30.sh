# adv30 scripts: run.sh then run2.sh (waits for run.sh)
K=c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc
B=/tmp/benchadv30
S=127000700
for cfg in "8 64 host 4s 10" "8 64 hex 4s 10" "32 64 host 16s 3" "8 64 host 16s 4"; do
  set -- $cfg
  echo "### N $1 name-len $2 style $3 key window $4 runs $5 seed $S benchadv30 (fc2f78a) load $(cut -d' ' -f1 /proc/loadavg) $(date +%H:%M:%S)"
  $B -seed $S -n $1 -window $4 -runs $5 -scenarios steady -libs fdkit,memberlist -key $K -name-len $2 -name-style $3 2>&1
  S=$((S+1))
done
echo "### end $(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
# ---- run2.sh
K=c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc
B=/tmp/benchadv30
S=127000710
for cfg in "8 64 host" "8 64 hex"; do
  set -- $cfg
  echo "### N $1 name-len $2 style $3 key settle 0 window 6s runs 6 seed $S benchadv30 (fc2f78a) load $(cut -d' ' -f1 /proc/loadavg) $(date +%H:%M:%S)"
  $B -seed $S -n $1 -settle 0s -window 6s -runs 6 -scenarios steady -libs fdkit,memberlist -key $K -name-len $2 -name-style $3 2>&1
  S=$((S+1))
done
echo "### end $(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
# ---- run3.sh
K=c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc
B=/tmp/benchadv30
S=127000712
for cfg in "8 64 host 12" "32 64 host 3"; do
  set -- $cfg
  echo "### N $1 name-len $2 style $3 key settle 0 window 6s runs $4 seed $S benchadv30 (fc2f78a) load $(cut -d' ' -f1 /proc/loadavg) $(date +%H:%M:%S)"
  $B -seed $S -n $1 -settle 0s -window 6s -runs $4 -scenarios steady -libs fdkit,memberlist -key $K -name-len $2 -name-style $3 2>&1
  S=$((S+1))
done
echo "### end $(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
