# One UDP CBR stream through a RED bottleneck in ns-2.35, for tests/test_red.py.
#   ns ns2_red_cbr.tcl RATE_MBPS PACKET_BYTES DURATION_S GENTLE WAIT BYTE_MODE MIN_TH MAX_TH SEED [ADAPTIVE]
# 1 Gb/s access links, a 10 Mb/s, 20 ms bottleneck whose RED queue holds LIMIT = 1000 packets
# (far above what RED lets build up), ns-2.35's RED defaults otherwise (thresholds 0 = automatic;
# ADAPTIVE 1: Adaptive RED, adaptive_ 1).
# Prints "drops N meanq_pkts Q max_p P": the bottleneck's drops and time-mean queue over the run,
# and RED's max_p at its end.
lassign $argv rate psize dur gentle wait bytes minth maxth seed adaptive
if {$adaptive eq ""} { set adaptive 0 }
set ns [new Simulator]
ns-random $seed
Queue/RED set adaptive_ $adaptive
Queue/RED set gentle_ $gentle
Queue/RED set wait_ $wait
Queue/RED set bytes_ $bytes
Queue/RED set queue_in_bytes_ $bytes
Queue/RED set thresh_ $minth
Queue/RED set maxthresh_ $maxth
set src [$ns node]; set r1 [$ns node]; set r2 [$ns node]; set dst [$ns node]
Queue set limit_ 1000
$ns duplex-link $src $r1 1000Mb 0ms DropTail
$ns simplex-link $r1 $r2 10Mb 20ms RED
$ns simplex-link $r2 $r1 10Mb 20ms DropTail
$ns duplex-link $r2 $dst 1000Mb 0ms DropTail
set udp [new Agent/UDP]
$udp set packetSize_ $psize
$ns attach-agent $src $udp
set sink [new Agent/Null]
$ns attach-agent $dst $sink
$ns connect $udp $sink
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ $psize
$cbr set rate_ ${rate}Mb
$cbr attach-agent $udp
set qmon [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.01]
set red [[$ns link $r1 $r2] queue]
$ns at 0.0 "$cbr start"
proc done {} {
    global qmon dur red
    puts "drops [$qmon set pdrops_] meanq_pkts [expr {[[$qmon get-pkts-integrator] set sum_] / $dur}] max_p [$red set cur_max_p_]"
    exit 0
}
$ns at $dur done
$ns run
