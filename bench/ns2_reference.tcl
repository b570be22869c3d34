# ns-2.35 version of tcplab's reference scenario (the ns2 set-up of the paper's
# section III-D): a dumbbell of two senders, two receivers and two routers,
# a 100 Mb/s bottleneck carrying the whole 100 ms RTT (50 ms each way), a
# DropTail router buffer of 1 BDP (100 Mb/s x 100 ms = 1,250,000 B = 833
# packets of 1500 B), two Linux NewReno flows (TCP-Linux "reno", SACK on),
# flow 1 at 0 s, flow 2 at 60 s, 300 simulated seconds.
#
#   ns bench/ns2_reference.tcl [key=value ...]
#
# Keys (defaults in brackets):
#   rtt=0.1          base round-trip time, seconds, all of it on the bottleneck
#   bw=100           bottleneck rate, Mb/s
#   access=1000      access link rate, Mb/s
#   buffer=          bottleneck DropTail limit in packets [bdp x bw x rtt / 1500 B, nearest]
#   bdp=1.0          buffer as a fraction of the BDP, used when buffer= is not given
#   access_buffer=1000  DropTail limit of every access link, packets (Linux txqueuelen,
#                    tcplab's default too)
#   duration=300     simulated seconds
#   start2=60        start of flow 2, seconds
#   win_start=120    throughput window start, seconds
#   win_end=         throughput window end, seconds [duration]
#   delack=0         1: delayed-ACK receivers (Agent/TCPSink/Sack1/DelAck)
#   count=1          0: do not count transmissions (to measure the cost of counting)
#
# At the end it prints one JSON line:
#   {"sim": "ns2", "transmissions": N, "flow1_mbps": x, "flow2_mbps": y, "jfi": j, ...}
# transmissions: packets (data and ACKs) handed from a queue to its link, summed
#   over all ten one-way links; one packet crossing one link is one transmission.
# flowN_mbps: goodput at receiver N (in-order payload bytes) over [win_start, win_end],
#   in Mb/s; the mean of the 1-s samples over the window is the same number.
# jfi: Jain's fairness index of the two goodputs.

# ---------------------------------------------------------------- parameters
array set cfg {
    rtt 0.1
    bw 100
    access 1000
    buffer ""
    bdp 1.0
    access_buffer 1000
    duration 300
    start2 60
    win_start 120
    win_end ""
    delack 0
    count 1
}
foreach a $argv {
    if {![regexp {^([a-z_0-9]+)=(.*)$} $a -> k v] || ![info exists cfg($k)]} {
        puts stderr "ns2_reference.tcl: unknown argument '$a'"
        puts stderr "keys: [lsort [array names cfg]]"
        exit 2
    }
    set cfg($k) $v
}

# IP packet 1500 B (the MTU): payload (MSS) 1448 B + IP 20 + TCP 20 + timestamp
# option 12. ns-2 sizes a data packet as packetSize_ + tcpip_base_hdr_size_, plus
# ts_option_size_ when timestamps are on. ACKs: 52 B (+ 8 B per SACK block,
# which the Sack1 sink adds itself).
set mss 1448
set base_hdr 40
set ts_opt 12
set hdr [expr {$base_hdr + $ts_opt}]
set pkt [expr {$mss + $hdr}]

set rtt $cfg(rtt)
set bw_bps [expr {$cfg(bw) * 1e6}]
if {$cfg(buffer) eq ""} {
    # nearest whole packet, as tcplab rounds a BDP fraction:
    # 1 BDP at 100 Mb/s and 100 ms = 1,250,000 B / 1500 B = 833.3 -> 833 packets
    set cfg(buffer) [expr {int(floor($cfg(bdp) * $bw_bps * $rtt / 8.0 / $pkt + 0.5))}]
}
if {$cfg(win_end) eq ""} { set cfg(win_end) $cfg(duration) }
set oneway [expr {$rtt / 2.0}]

# ---------------------------------------------------------------- TCP senders and receivers
Agent/TCP set packetSize_ $mss
Agent/TCP set tcpip_base_hdr_size_ $base_hdr
Agent/TCP set ts_option_size_ $ts_opt
# Receiver window (packets) large enough never to limit: the largest useful
# window is BDP + buffer, about 1666 packets here.
Agent/TCP set window_ 10000
Agent/TCP set maxcwnd_ 0
Agent/TCPSink set packetSize_ $hdr
# Timestamps on (RFC 1323, a Linux default, as in the paper).
Agent/TCP/Linux set timestamps_ true
Agent/TCPSink set ts_echo_rfc1323_ true

set ns [new Simulator]

# ---------------------------------------------------------------- topology
#   s1 --\                        /-- d1
#         r1 ==== 100 Mb/s ==== r2
#   s2 --/      50 ms each way    \-- d2
#
# Access links: 1 Gb/s, 0 ms. The paper's ns2 set-up (its Fig. 2) used
# 100 Mb/s access links; 1 Gb/s is chosen here because it is the access rate of
# tcplab's reference scenario (bench/reference.toml) and of today's hosts, so
# the only link where a queue builds is the bottleneck, and the two simulators
# run the same topology. Pass access=100 for the paper's exact figure.
set s1 [$ns node]
set s2 [$ns node]
set r1 [$ns node]
set r2 [$ns node]
set d1 [$ns node]
set d2 [$ns node]

set acc "[expr {$cfg(access) * 1e6}]"
$ns duplex-link $s1 $r1 $acc 0ms DropTail
$ns duplex-link $s2 $r1 $acc 0ms DropTail
$ns duplex-link $r1 $r2 $bw_bps [expr {$oneway * 1000.0}]ms DropTail
$ns duplex-link $r2 $d1 $acc 0ms DropTail
$ns duplex-link $r2 $d2 $acc 0ms DropTail

foreach {a b} [list $s1 $r1 $s2 $r1 $r2 $d1 $r2 $d2] {
    $ns queue-limit $a $b $cfg(access_buffer)
    $ns queue-limit $b $a $cfg(access_buffer)
}
$ns queue-limit $r1 $r2 $cfg(buffer)
$ns queue-limit $r2 $r1 $cfg(buffer)

# ---------------------------------------------------------------- flows
if {$cfg(delack)} { set sinkclass Agent/TCPSink/Sack1/DelAck } else { set sinkclass Agent/TCPSink/Sack1 }
set starts [list 0.0 $cfg(start2)]
set senders [list $s1 $s2]
set receivers [list $d1 $d2]
set tcps {}
set sinks {}
for {set i 0} {$i < 2} {incr i} {
    set tcp [new Agent/TCP/Linux]
    $tcp set fid_ [expr {$i + 1}]
    $ns attach-agent [lindex $senders $i] $tcp
    set sink [new $sinkclass]
    $ns attach-agent [lindex $receivers $i] $sink
    $ns connect $tcp $sink
    $ns at 0 "$tcp select_ca reno"
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [lindex $starts $i] "$ftp start"
    lappend tcps $tcp
    lappend sinks $sink
}

# ---------------------------------------------------------------- counting
# A SnoopQueue/Out between each link's queue and its delay line counts every
# packet put on the wire (QueueMonitor pdepartures_): one function call per
# packet, no trace output. Drops go to the link's drop head, not past it.
set monitors {}
if {$cfg(count)} {
    foreach {a b} [list $s1 $r1 $s2 $r1 $r1 $r2 $r2 $d1 $r2 $d2] {
        foreach {x y} [list $a $b $b $a] {
            set link [$ns link $x $y]
            set q [$link queue]
            set qm [new QueueMonitor]
            set snoop [new SnoopQueue/Out]
            $snoop target [$q target]
            $q target $snoop
            $snoop set-monitor $qm
            lappend monitors $qm
        }
    }
}
# Drops at the bottleneck (reported, not needed for the transmission count).
set dropmon [new QueueMonitor]
set dropsnoop [new SnoopQueue/Drop]
set dl [$ns link $r1 $r2]
set dh [$dl set drophead_]
$dropsnoop target [$dh target]
$dh target $dropsnoop
$dropsnoop set-monitor $dropmon

# ---------------------------------------------------------------- goodput
# Agent/TCPSink bytes_ counts in-order delivered packets at their IP size, in a
# 32-bit integer that wraps after 2 GiB (about 170 s of one flow at 100 Mb/s).
# So it is sampled every simulated second (like iperf -i 1), the deltas taken
# modulo 2^32 and summed; payload = packets x MSS.
set prev {0 0}
set cum {0.0 0.0}
proc sample {} {
    global sinks prev cum
    set np {}
    set nc {}
    for {set i 0} {$i < 2} {incr i} {
        set cur [[lindex $sinks $i] set bytes_]
        set d [expr {$cur - [lindex $prev $i]}]
        if {$d < 0} { set d [expr {$d + 4294967296}] }
        lappend np $cur
        lappend nc [expr {[lindex $cum $i] + $d}]
    }
    set prev $np
    set cum $nc
}
proc tick {} {
    global ns
    sample
    $ns at [expr {[$ns now] + 1.0}] "tick"
}
proc payload {} {
    global cum pkt mss
    return [list [expr {[lindex $cum 0] / $pkt * $mss}] [expr {[lindex $cum 1] / $pkt * $mss}]]
}
set at_start {0.0 0.0}
set at_end {}
proc mark_start {} {
    global at_start
    sample
    set at_start [payload]
}
proc mark_end {} {
    global at_end
    sample
    set at_end [payload]
}
proc finish {} {
    global cfg sinks at_start at_end monitors dropmon ns
    if {$at_end eq ""} { mark_end }
    set span [expr {double($cfg(win_end) - $cfg(win_start))}]
    set mbps {}
    for {set i 0} {$i < 2} {incr i} {
        set b [expr {[lindex $at_end $i] - [lindex $at_start $i]}]
        lappend mbps [expr {$b * 8.0 / $span / 1e6}]
    }
    set x [lindex $mbps 0]
    set y [lindex $mbps 1]
    if {$x + $y > 0} {
        set jfi [expr {($x + $y) * ($x + $y) / (2.0 * ($x * $x + $y * $y))}]
    } else {
        set jfi 0.0
    }
    if {$cfg(count)} {
        set n 0
        foreach qm $monitors { incr n [$qm set pdepartures_] }
    } else {
        set n null
    }
    puts [format {{"sim": "ns2", "transmissions": %s, "flow1_mbps": %.4f, "flow2_mbps": %.4f, "jfi": %.6f, "bottleneck_drops": %d, "rtt_s": %s, "buffer_pkts": %d, "duration_s": %s, "start2_s": %s, "window_s": [%s, %s]}} \
        $n $x $y $jfi [$dropmon set pdrops_] $cfg(rtt) $cfg(buffer) $cfg(duration) $cfg(start2) $cfg(win_start) $cfg(win_end)]
    flush stdout
    exit 0
}
$ns at 1.0 "tick"
$ns at $cfg(win_start) "mark_start"
$ns at $cfg(win_end) "mark_end"
$ns at $cfg(duration) "finish"
$ns run
