# UDP CBR streams through a DRR bottleneck in ns-2.35, for tests/test_drr.py.
#   ns ns2_drr_cbr.tcl DURATION_S QUANTUM_BYTES LIMIT_BYTES RATE_MBPS:PACKET_BYTES ...
# One source node per stream (DRR's buckets are per source address), 1 Gb/s access links, a
# 10 Mb/s, 20 ms bottleneck with Queue/DRR (buckets_ 16: no collisions for a handful of nodes).
# Prints "flow I bytes B" per stream (bytes its sink received) and "drops N" (the bottleneck's).
set dur [lindex $argv 0]
set quantum [lindex $argv 1]
set limit [lindex $argv 2]
set ns [new Simulator]
Queue/DRR set buckets_ 16
Queue/DRR set quantum_ $quantum
Queue/DRR set blimit_ $limit
set r1 [$ns node]; set r2 [$ns node]
$ns simplex-link $r1 $r2 10Mb 20ms DRR
$ns simplex-link $r2 $r1 10Mb 20ms DropTail
set sinks {}
foreach stream [lrange $argv 3 end] {
    lassign [split $stream :] rate psize
    set src [$ns node]; set dst [$ns node]
    $ns duplex-link $src $r1 1000Mb 0ms DropTail
    $ns duplex-link $r2 $dst 1000Mb 0ms DropTail
    set udp [new Agent/UDP]
    $udp set packetSize_ $psize
    $ns attach-agent $src $udp
    set sink [new Agent/LossMonitor]
    $ns attach-agent $dst $sink
    $ns connect $udp $sink
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $psize
    $cbr set rate_ ${rate}Mb
    $cbr attach-agent $udp
    $ns at 0.0 "$cbr start"
    lappend sinks $sink
}
set qmon [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.01]
proc done {} {
    global qmon sinks
    set i 0
    foreach sink $sinks {
        incr i
        puts "flow $i bytes [$sink set bytes_]"
    }
    puts "drops [$qmon set pdrops_]"
    exit 0
}
$ns at $dur done
$ns run
